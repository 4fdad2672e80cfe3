#include "text/sentencepiece_tokenizer.h"

#include <algorithm>
#include <filesystem>
#include <fstream>

#include <sentencepiece_processor.h>

#include "model/gguf/gguf_file.h"
#include "text/utf8_stream.h"
#include "util/error.h"
#include "util/utf8.h"

namespace kvscope {

namespace {

// A tokenizer.model is a few MB at most (Llama 2: 0.5 MB, Gemma: 4 MB); anything far
// larger is not one, and reading it whole would only waste memory.
constexpr std::uintmax_t kMaxModelFileBytes = 256u << 20;

// What SentencePiece prints for an unknown piece (TrainerSpec.unk_surface's default).
constexpr std::string_view kUnknownSurface = " \xE2\x81\x87 ";
constexpr std::string_view kSpaceMarker = "\xE2\x96\x81";  // U+2581, SentencePiece's space

// Control pieces that end a turn in chat templates, when the metadata names no eot id.
constexpr std::string_view kEndOfTurnPieces[] = {"<|im_end|>", "<end_of_turn>", "<|eot_id|>",
                                                 "<|end|>"};

std::string replace_space_marker(std::string_view piece) {
  std::string out;
  out.reserve(piece.size());
  for (std::size_t pos = 0; pos < piece.size();) {
    if (piece.substr(pos, kSpaceMarker.size()) == kSpaceMarker) {
      out += ' ';
      pos += kSpaceMarker.size();
    } else {
      out += piece[pos++];
    }
  }
  return out;
}

// The bytes a piece stands for in generated text (as llama.cpp's token_to_piece).
std::string piece_bytes(const SpPiece& piece, std::size_t id, const std::string& source) {
  switch (piece.type) {
    case SpPieceType::Control:
      return {};
    case SpPieceType::Unknown:
      return std::string(kUnknownSurface);
    case SpPieceType::UserDefined:
      return piece.piece;
    case SpPieceType::Byte: {
      const int value = sp_byte_piece_value(piece.piece);
      if (value < 0) {
        throw_error<ModelError>("{}: piece {} (\"{}\") is a byte piece but not of the form <0xZZ>",
                                source, id, printable_prefix(piece.piece));
      }
      return std::string(1, static_cast<char>(value));
    }
    case SpPieceType::Normal:
    case SpPieceType::Unused:
      break;
  }
  return replace_space_marker(piece.piece);
}

TokenId checked_special(std::int32_t id, std::size_t n_vocab, std::string_view what,
                        const std::string& source) {
  if (id < -1 || (id >= 0 && static_cast<std::size_t>(id) >= n_vocab)) {
    throw_error<ModelError>("{}: {} {} is out of range (vocab size {})", source, what, id, n_vocab);
  }
  return id;
}

std::string read_model_file(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) {
    throw_error<ModelError>("{}: no such tokenizer model file", path);
  }
  const std::uintmax_t size = fs::file_size(path, ec);
  if (ec) throw_error<ModelError>("{}: cannot read its size: {}", path, ec.message());
  if (size == 0) throw_error<ModelError>("{}: the tokenizer model file is empty", path);
  if (size > kMaxModelFileBytes) {
    throw_error<ModelError>("{}: {} bytes is too large for a tokenizer model (at most {})", path,
                            size, kMaxModelFileBytes);
  }
  std::ifstream in(path, std::ios::binary);
  std::string bytes(static_cast<std::size_t>(size), '\0');
  if (!in.read(bytes.data(), static_cast<std::streamsize>(size))) {
    throw_error<ModelError>("{}: could not read {} bytes", path, size);
  }
  return bytes;
}

}  // namespace

SentencePieceTokenizer::SentencePieceTokenizer(std::string_view serialized, SpVocab vocab,
                                               std::string source)
    : processor_(std::make_unique<sentencepiece::SentencePieceProcessor>()),
      source_(std::move(source)) {
  SpModel& model = vocab.model;
  const std::size_t n = model.pieces.size();
  if (n == 0) throw_error<ModelError>("{}: the tokenizer has no pieces", source_);
  // User text never becomes a special token: the library gets the user-defined pieces as
  // control pieces, which it never matches in text; split_control adds them where control
  // text names them (as the BPE path does, and unlike llama.cpp, which matches user-defined
  // pieces in any text). Whitespace-only pieces are split out of the text (encode_run).
  const auto status =
      processor_->LoadFromSerializedProto(sp_model_without_user_defined(serialized, source_));
  if (!status.ok()) {
    throw_error<ModelError>("{}: SentencePiece cannot load the tokenizer: {}", source_,
                            status.ToString());
  }
  if (static_cast<std::size_t>(processor_->GetPieceSize()) != n) {
    throw_error<ModelError>("{}: SentencePiece reads {} pieces, the model proto has {}", source_,
                            processor_->GetPieceSize(), n);
  }
  bos_ = checked_special(model.bos_id, n, "bos id", source_);
  eos_ = checked_special(model.eos_id, n, "eos id", source_);
  eot_ = checked_special(vocab.eot, n, "eot id", source_);
  add_bos_ = vocab.add_bos;
  add_eos_ = vocab.add_eos;
  add_dummy_prefix_ = model.add_dummy_prefix;
  pieces_ = std::move(model.pieces);

  bytes_.reserve(n);
  for (std::size_t id = 0; id < n; ++id) {
    const SpPiece& p = pieces_[id];
    bytes_.push_back(piece_bytes(p, id, source_));
    if (p.type == SpPieceType::UserDefined && sp_whitespace_piece(p.piece)) {
      whitespace_pieces_.push_back({p.piece, static_cast<TokenId>(id)});
    }
    if (p.type == SpPieceType::Control || p.type == SpPieceType::UserDefined) {
      specials_.push_back({p.piece, static_cast<TokenId>(id)});
      const bool ends_turn =
          std::ranges::find(kEndOfTurnPieces, p.piece) != std::end(kEndOfTurnPieces);
      if (ends_turn) end_of_generation_.push_back(static_cast<TokenId>(id));
    }
  }
  if (eot_ < 0 && !end_of_generation_.empty()) eot_ = end_of_generation_.front();
  // Longest first, so "<|im_start|>" wins over a "<|" that is also a piece.
  std::ranges::stable_sort(specials_, std::greater<>(),
                           [](const Special& s) { return s.text.size(); });
  std::ranges::stable_sort(whitespace_pieces_, std::greater<>(),
                           [](const Special& s) { return s.text.size(); });
}

SentencePieceTokenizer::~SentencePieceTokenizer() = default;

const SpPiece& SentencePieceTokenizer::at(TokenId id) const {
  if (id < 0 || static_cast<std::size_t>(id) >= pieces_.size()) {
    throw_error<TextError>("token id {} is out of range (vocab size {})", id, pieces_.size());
  }
  return pieces_[static_cast<std::size_t>(id)];
}

void SentencePieceTokenizer::check_text(std::string_view text, std::string_view what) const {
  if (const auto bad = find_invalid_utf8(text)) {
    throw_error<TextError>("{} is not valid UTF-8 (byte {} of {})", what, *bad, text.size());
  }
}

// llama.cpp's partition of text at user-defined pieces (here the whitespace ones): each
// piece, longest first, splits every fragment not yet a piece at each of its occurrences,
// left to right; the fragments left are encoded one by one. 33 spaces become the 31-space
// piece and the 2-space one, as the Gemma reference ids have them.
void SentencePieceTokenizer::encode_run(std::string_view text, std::vector<TokenId>& ids) const {
  if (text.empty()) return;
  struct Fragment {
    std::string_view text;
    TokenId id = -1;  // >= 0: the fragment is this piece
  };
  std::vector<Fragment> fragments{{text}}, next;
  for (const Special& piece : whitespace_pieces_) {
    next.clear();
    for (const Fragment& f : fragments) {
      std::string_view rest = f.text;
      for (std::size_t at = 0;
           f.id < 0 && (at = rest.find(piece.text)) != std::string_view::npos;) {
        if (at > 0) next.push_back({rest.substr(0, at)});
        next.push_back({{}, piece.id});
        rest.remove_prefix(at + piece.text.size());
      }
      if (f.id >= 0) {
        next.push_back(f);
      } else if (!rest.empty()) {
        next.push_back({rest});
      }
    }
    fragments.swap(next);
  }
  for (const Fragment& f : fragments) {
    if (f.id >= 0) {
      ids.push_back(f.id);
    } else {
      encode_fragment(f.text, ids);
    }
  }
}

void SentencePieceTokenizer::encode_fragment(std::string_view text,
                                             std::vector<TokenId>& ids) const {
  std::vector<int> run_ids;
  const auto status = processor_->Encode(text, &run_ids);
  if (!status.ok()) {
    throw_error<TextError>("SentencePiece could not encode {} bytes of text: {}", text.size(),
                           status.ToString());
  }
  ids.insert(ids.end(), run_ids.begin(), run_ids.end());
}

void SentencePieceTokenizer::split_control(std::string_view text, std::string& run,
                                           std::vector<TokenId>& ids) const {
  std::size_t plain_start = 0;
  for (std::size_t pos = 0; pos < text.size();) {
    const auto match = std::ranges::find_if(
        specials_, [&](const Special& s) { return text.substr(pos).starts_with(s.text); });
    if (match == specials_.end()) {
      ++pos;
      continue;
    }
    run.append(text.substr(plain_start, pos - plain_start));
    encode_run(run, ids);
    run.clear();
    ids.push_back(match->id);
    pos += match->text.size();
    plain_start = pos;
  }
  run.append(text.substr(plain_start));
}

void SentencePieceTokenizer::finish(std::vector<TokenId>& ids, bool add_special) const {
  if (add_special && add_eos_ && eos_ >= 0) ids.push_back(eos_);
}

std::vector<TokenId> SentencePieceTokenizer::encode(std::string_view text, bool add_bos) const {
  check_text(text, "the text");
  std::vector<TokenId> ids;
  if (add_bos && bos_ >= 0) ids.push_back(bos_);
  encode_run(text, ids);
  finish(ids, add_bos);
  return ids;
}

std::vector<TokenId> SentencePieceTokenizer::encode_parts(const std::vector<PromptPart>& parts,
                                                          bool add_bos) const {
  std::vector<TokenId> ids;
  if (add_bos && bos_ >= 0) ids.push_back(bos_);
  // Text between special tokens, Control and Text parts alike, is encoded as one string:
  // the template's "\n" and the user's first word tokenize as they would in one prompt.
  std::string run;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const PromptPart& part = parts[i];
    check_text(part.text, fmt::format("prompt part {}", i));
    if (part.kind == PromptPart::Kind::Control) {
      split_control(part.text, run, ids);
    } else {
      run += part.text;
    }
  }
  encode_run(run, ids);
  finish(ids, add_bos);
  return ids;
}

std::string SentencePieceTokenizer::token_bytes(TokenId id) const {
  at(id);
  return bytes_[static_cast<std::size_t>(id)];
}

std::string SentencePieceTokenizer::piece(TokenId id) const {
  return at(id).piece;
}

std::string SentencePieceTokenizer::decode(const std::vector<TokenId>& ids) const {
  std::string text;
  bool first_text = true;
  for (const TokenId id : ids) {
    const SpPiece& p = at(id);
    const std::string& b = bytes_[static_cast<std::size_t>(id)];
    if (p.type == SpPieceType::Control) continue;
    // The dummy prefix: SentencePiece put a space before the first word; take it away.
    const bool drop_space = first_text && add_dummy_prefix_ && b.starts_with(' ') &&
                            (p.type == SpPieceType::Normal || p.type == SpPieceType::Unused);
    text.append(b, drop_space ? 1 : 0);
    first_text = false;
  }
  return text;
}

bool SentencePieceTokenizer::is_special(TokenId id) const {
  return at(id).type == SpPieceType::Control;
}

bool SentencePieceTokenizer::is_end_of_generation(TokenId id) const {
  return (id >= 0 && (id == eos_ || id == eot_)) ||
         std::ranges::find(end_of_generation_, id) != end_of_generation_.end();
}

std::unique_ptr<Tokenizer> load_sentencepiece_file(const std::string& path,
                                                   const Model::SpecialTokenFlags& flags) {
  const std::string bytes = read_model_file(path);
  SpVocab vocab;
  vocab.model = parse_sp_model(bytes, path);
  vocab.add_bos = flags.add_bos.value_or(vocab.add_bos);
  vocab.add_eos = flags.add_eos.value_or(vocab.add_eos);
  return std::make_unique<SentencePieceTokenizer>(bytes, std::move(vocab), path);
}

std::unique_ptr<Tokenizer> load_sentencepiece_gguf(const GgufFile& gguf) {
  SpVocab vocab = sp_vocab_from_llama(read_llama_vocab(gguf), gguf.path());
  const std::string proto = serialize_sp_model(vocab.model);
  return std::make_unique<SentencePieceTokenizer>(proto, std::move(vocab), gguf.path());
}

}  // namespace kvscope
