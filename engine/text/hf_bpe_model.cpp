#include "text/hf_bpe_model.h"

#include <fmt/format.h>

#include "model/hf_json.h"
#include "model/json_reader.h"
#include "util/error.h"

namespace kvscope {
namespace {

using nlohmann::json;

// Real vocabs hold up to ~262k pieces; ids index tables sized by the largest one.
constexpr std::int64_t kMaxTokenId = (std::int64_t{1} << 24) - 1;

std::size_t utf8_length(unsigned char lead) {
  return lead < 0x80 ? 1 : lead < 0xe0 ? 2 : lead < 0xf0 ? 3 : 4;
}

}  // namespace

HfBpeModel::HfBpeModel(const json& model, const std::string& source) {
  const std::string where = source + ": model";
  if (!model.is_object()) {
    throw_error<ModelError>("{}: expected an object, found {}", where, describe_json(model));
  }
  const std::string type = hf::find_string(model, "type", where).value_or("BPE");
  if (type != "BPE") {
    throw_error<ModelError>("{}: type \"{}\" is not supported (only BPE)", where,
                            quote_prefix(type));
  }
  for (const char* field : {"continuing_subword_prefix", "end_of_word_suffix"}) {
    if (!hf::find_string(model, field, where).value_or("").empty()) {
      throw_error<ModelError>(
          "{}: {} is not supported (byte-level and SentencePiece-style BPE "
          "vocabs leave it empty)",
          where, field);
    }
  }
  if (hf::find_float(model, "dropout", where).value_or(0.0) > 0.0) {
    throw_error<ModelError>("{}: dropout is a training option; tokenizing with it is random",
                            where);
  }
  const auto vocab = model.find("vocab");
  read_vocab(vocab == model.end() ? json() : *vocab, where + ".vocab");
  const auto merges = model.find("merges");
  read_merges(merges == model.end() ? json::array() : *merges, where + ".merges");
  if (const auto unk = hf::find_string(model, "unk_token", where)) {
    unk_ = vocab_id(*unk, where + ".unk_token");
  }
  fuse_unk_ = hf::find_bool(model, "fuse_unk", where).value_or(false);
  byte_fallback_ = hf::find_bool(model, "byte_fallback", where).value_or(false);
  ignore_merges_ = hf::find_bool(model, "ignore_merges", where).value_or(false);
  for (int b = 0; b < 256; ++b) {
    byte_tokens_[static_cast<std::size_t>(b)] = find(fmt::format("<0x{:02X}>", b)).value_or(-1);
  }
}

void HfBpeModel::read_vocab(const json& vocab, const std::string& where) {
  if (!vocab.is_object() || vocab.empty()) {
    throw_error<ModelError>("{}: expected an object of piece: id, found {}", where,
                            describe_json(vocab));
  }
  if (vocab.size() > kMaxVocab) {
    throw_error<ModelError>("{}: {} pieces, more than the {} this reader accepts", where,
                            vocab.size(), kMaxVocab);
  }
  std::vector<bool> seen;
  vocab_.reserve(vocab.size());
  for (const auto& item : vocab.items()) {
    const std::string& piece = item.key();  // not a structured binding: the lambda names it
    const json& id = item.value();
    const auto field = [&] { return fmt::format("{}[{}]", where, quote_prefix(piece)); };
    if (!id.is_number_integer() || id.get<std::int64_t>() < 0 ||
        id.get<std::int64_t>() > kMaxTokenId) {
      throw_error<ModelError>("{}: expected an id in 0..{}, found {}", field(), kMaxTokenId,
                              describe_json(id));
    }
    const auto value = static_cast<TokenId>(id.get<std::int64_t>());
    if (static_cast<std::size_t>(value) >= seen.size())
      seen.resize(static_cast<std::size_t>(value) + 1);
    if (seen[static_cast<std::size_t>(value)]) {
      throw_error<ModelError>("{}: id {} is given to another piece too", field(), value);
    }
    seen[static_cast<std::size_t>(value)] = true;
    vocab_.emplace(piece, value);
    max_id_ = std::max(max_id_, value);
  }
}

TokenId HfBpeModel::vocab_id(std::string_view piece, const std::string& where) const {
  const auto id = find(piece);
  if (!id) {
    throw_error<ModelError>("{}: {} is not in the vocab", where, quote_prefix(piece));
  }
  return *id;
}

std::optional<TokenId> HfBpeModel::find(std::string_view piece) const {
  const auto it = vocab_.find(piece);
  if (it == vocab_.end()) return std::nullopt;
  return it->second;
}

// Merges are "left right" (one space; older files) or ["left", "right"] (tokenizers >= 0.20,
// which allows spaces inside pieces). Rank = position; the merged piece must be in the vocab.
void HfBpeModel::read_merges(const json& merges, const std::string& where) {
  if (!merges.is_array()) {
    throw_error<ModelError>("{}: expected a list, found {}", where, describe_json(merges));
  }
  if (merges.size() > kMaxMerges) {
    throw_error<ModelError>("{}: {} merges, more than the {} this reader accepts", where,
                            merges.size(), kMaxMerges);
  }
  merges_.reserve(merges.size());
  std::string joined_piece;
  for (std::size_t rank = 0; rank < merges.size(); ++rank) {
    const json& m = merges[rank];
    const auto field = [&] { return fmt::format("{}[{}]", where, rank); };
    std::string_view left;
    std::string_view right;
    if (m.is_string()) {
      const std::string& s = m.get_ref<const std::string&>();
      const std::size_t space = s.find(' ');
      if (space == std::string::npos || s.find(' ', space + 1) != std::string::npos) {
        throw_error<ModelError>("{}: {} is not two pieces separated by one space", field(),
                                quote_prefix(s));
      }
      left = std::string_view(s).substr(0, space);
      right = std::string_view(s).substr(space + 1);
    } else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {
      left = m[0].get_ref<const std::string&>();
      right = m[1].get_ref<const std::string&>();
    } else {
      throw_error<ModelError>("{}: expected \"a b\" or [\"a\", \"b\"], found {}", field(),
                              describe_json(m));
    }
    joined_piece.assign(left).append(right);
    const auto l = find(left);
    const auto r = find(right);
    const auto joined = find(joined_piece);
    if (!l || !r || !joined) {
      const std::string_view missing = !l ? left : !r ? right : std::string_view(joined_piece);
      throw_error<ModelError>("{}: {} is not in the vocab", field(), quote_prefix(missing));
    }
    merges_.add(*l, *r, static_cast<std::int32_t>(rank), *joined);
  }
}

// The symbols of one character: its token, else its byte tokens (byte_fallback), else
// unk (consecutive unknowns fused into one with fuse_unk); without unk it is dropped, as
// the HF library drops it.
void HfBpeModel::push_char(std::string_view ch, std::vector<TokenId>& symbols, bool& in_unk) const {
  if (const auto id = find(ch)) {
    symbols.push_back(*id);
    in_unk = false;
    return;
  }
  if (byte_fallback_) {
    bool all = true;
    for (const char c : ch) all = all && byte_tokens_[static_cast<std::uint8_t>(c)] >= 0;
    if (all) {
      for (const char c : ch) symbols.push_back(byte_tokens_[static_cast<std::uint8_t>(c)]);
      in_unk = false;
      return;
    }
  }
  if (unk_ < 0) return;
  if (!(fuse_unk_ && in_unk)) symbols.push_back(unk_);
  in_unk = true;
}

void HfBpeModel::encode_word(std::string_view word, std::vector<TokenId>& out) const {
  if (word.empty()) return;
  if (ignore_merges_) {
    if (const auto id = find(word)) {
      out.push_back(*id);
      return;
    }
  }
  std::vector<TokenId> symbols;  // [n_symbols] of the word, then merged in place
  symbols.reserve(word.size());
  bool in_unk = false;
  for (std::size_t i = 0; i < word.size();) {
    const std::size_t len =
        std::min(utf8_length(static_cast<unsigned char>(word[i])), word.size() - i);
    push_char(word.substr(i, len), symbols, in_unk);
    i += len;
  }
  merges_.apply(symbols);
  out.insert(out.end(), symbols.begin(), symbols.end());
}

}  // namespace kvscope
