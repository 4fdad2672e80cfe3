#include "text/sp_gguf_vocab.h"

#include <cstdint>
#include <string_view>
#include <unordered_map>

#include "model/gguf/gguf_file.h"
#include "util/error.h"
#include "util/utf8.h"

namespace kvscope {

namespace {

constexpr std::string_view kHexDigits = "0123456789ABCDEF";

// A special token id from the metadata: -1 when absent. llama.cpp writes "none" as -1 or
// as its uint32 image 4294967295; anything else must index the vocab.
std::int32_t special_id(std::int64_t id, std::size_t n_vocab, std::string_view key,
                        const std::string& source) {
  if (id == -1 || id == 0xFFFFFFFF) return -1;
  if (id < 0 || static_cast<std::uint64_t>(id) >= n_vocab) {
    throw_error<ModelError>("{}: {} = {} is out of range (vocab size {})", source, key, id,
                            n_vocab);
  }
  return static_cast<std::int32_t>(id);
}

void check_sizes(const LlamaVocab& vocab, const std::string& source) {
  const std::size_t n = vocab.tokens.size();
  if (n == 0) throw_error<ModelError>("{}: tokenizer.ggml.tokens is empty", source);
  if (n > static_cast<std::size_t>(INT32_MAX)) {
    throw_error<ModelError>("{}: tokenizer.ggml.tokens has {} entries (at most {})", source, n,
                            INT32_MAX);
  }
  if (vocab.scores.size() != n) {
    throw_error<ModelError>("{}: tokenizer.ggml.scores has {} entries, tokenizer.ggml.tokens {}",
                            source, vocab.scores.size(), n);
  }
  if (vocab.token_types.size() != n) {
    throw_error<ModelError>(
        "{}: tokenizer.ggml.token_type has {} entries, tokenizer.ggml.tokens {}", source,
        vocab.token_types.size(), n);
  }
}

SpPiece make_piece(const LlamaVocab& vocab, std::size_t i, const std::string& source) {
  SpPiece piece{vocab.tokens[i], vocab.scores[i], SpPieceType::Normal};
  const std::int64_t type = vocab.token_types[i];
  if (type < 1 || type > 6) {
    throw_error<ModelError>("{}: tokenizer.ggml.token_type[{}] = {} is not a known token type",
                            source, i, type);
  }
  piece.type = static_cast<SpPieceType>(type);
  if (piece.piece.empty())
    throw_error<ModelError>("{}: tokenizer.ggml.tokens[{}] is empty", source, i);
  if (piece.type == SpPieceType::Byte) {
    const int value = sp_byte_piece_value(piece.piece);
    if (value < 0) {
      throw_error<ModelError>(
          "{}: tokenizer.ggml.tokens[{}] = \"{}\" is a byte token but not of "
          "the form <0xZZ>",
          source, i, printable_prefix(piece.piece));
    }
    piece.piece[3] = kHexDigits[static_cast<std::size_t>(value >> 4)];
    piece.piece[4] = kHexDigits[static_cast<std::size_t>(value & 15)];
  }
  return piece;
}

// SentencePiece needs exactly one unknown piece; a vocab that marks none may name it by id.
void settle_unknown(SpModel& model, std::int32_t unk_id, const std::string& source) {
  std::int32_t found = -1;
  for (std::size_t i = 0; i < model.pieces.size(); ++i) {
    if (model.pieces[i].type != SpPieceType::Unknown) continue;
    if (found >= 0) {
      throw_error<ModelError>("{}: tokens {} and {} are both of the unknown type (2)", source,
                              found, i);
    }
    found = static_cast<std::int32_t>(i);
  }
  if (found < 0 && unk_id >= 0) {
    model.pieces[static_cast<std::size_t>(unk_id)].type = SpPieceType::Unknown;
    found = unk_id;
  }
  if (found < 0) {
    throw_error<ModelError>(
        "{}: the vocab has no unknown token (no token of type 2 and no "
        "tokenizer.ggml.unknown_token_id)",
        source);
  }
  model.unk_id = found;
}

void check_unique(const SpModel& model, const std::string& source) {
  std::unordered_map<std::string_view, std::size_t> seen;
  seen.reserve(model.pieces.size());
  for (std::size_t i = 0; i < model.pieces.size(); ++i) {
    const auto [it, inserted] = seen.emplace(model.pieces[i].piece, i);
    if (!inserted) {
      throw_error<ModelError>("{}: tokenizer.ggml.tokens[{}] and [{}] are both \"{}\"", source,
                              it->second, i, printable_prefix(model.pieces[i].piece));
    }
  }
}

}  // namespace

LlamaVocab read_llama_vocab(const GgufFile& gguf) {
  LlamaVocab vocab;
  vocab.tokens = gguf.get_string_array("tokenizer.ggml.tokens");
  const std::size_t n = vocab.tokens.size();
  // llama.cpp treats missing scores as 0 and missing types as normal.
  vocab.scores = gguf.has("tokenizer.ggml.scores") ? gguf.get_float_array("tokenizer.ggml.scores")
                                                   : std::vector<float>(n, 0.0f);
  vocab.token_types = gguf.has("tokenizer.ggml.token_type")
                          ? gguf.get_int_array("tokenizer.ggml.token_type")
                          : std::vector<std::int64_t>(n, 1);
  vocab.bos_id = gguf.find_int("tokenizer.ggml.bos_token_id").value_or(-1);
  vocab.eos_id = gguf.find_int("tokenizer.ggml.eos_token_id").value_or(-1);
  vocab.unk_id = gguf.find_int("tokenizer.ggml.unknown_token_id").value_or(-1);
  vocab.pad_id = gguf.find_int("tokenizer.ggml.padding_token_id").value_or(-1);
  vocab.eot_id = gguf.find_int("tokenizer.ggml.eot_token_id").value_or(-1);
  vocab.add_bos = gguf.find_bool("tokenizer.ggml.add_bos_token").value_or(true);
  vocab.add_eos = gguf.find_bool("tokenizer.ggml.add_eos_token").value_or(false);
  vocab.add_space_prefix = gguf.find_bool("tokenizer.ggml.add_space_prefix").value_or(true);
  vocab.remove_extra_whitespaces =
      gguf.find_bool("tokenizer.ggml.remove_extra_whitespaces").value_or(false);
  return vocab;
}

SpVocab sp_vocab_from_llama(const LlamaVocab& vocab, const std::string& source) {
  check_sizes(vocab, source);
  const std::size_t n = vocab.tokens.size();
  SpVocab out;
  SpModel& model = out.model;
  model.pieces.reserve(n);
  std::size_t n_bytes = 0;
  for (std::size_t i = 0; i < n; ++i) {
    model.pieces.push_back(make_piece(vocab, i, source));
    if (model.pieces.back().type == SpPieceType::Byte) ++n_bytes;
  }
  check_unique(model, source);
  settle_unknown(model, special_id(vocab.unk_id, n, "tokenizer.ggml.unknown_token_id", source),
                 source);
  model.bos_id = special_id(vocab.bos_id, n, "tokenizer.ggml.bos_token_id", source);
  model.eos_id = special_id(vocab.eos_id, n, "tokenizer.ggml.eos_token_id", source);
  model.pad_id = special_id(vocab.pad_id, n, "tokenizer.ggml.padding_token_id", source);
  out.eot = special_id(vocab.eot_id, n, "tokenizer.ggml.eot_token_id", source);
  out.add_bos = vocab.add_bos;
  out.add_eos = vocab.add_eos;

  // Pieces are unique, so 256 byte pieces are exactly <0x00>..<0xFF>.
  model.algorithm = SpModel::Algorithm::Bpe;
  model.byte_fallback = n_bytes == 256;
  model.normalizer_name = "identity";
  model.add_dummy_prefix = vocab.add_space_prefix;
  model.remove_extra_whitespaces = vocab.remove_extra_whitespaces;
  model.escape_whitespaces = true;
  return out;
}

}  // namespace kvscope
