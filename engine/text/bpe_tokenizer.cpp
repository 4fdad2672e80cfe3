#include "text/bpe_tokenizer.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "model/gguf/gguf_file.h"
#include "text/bpe_merges.h"
#include "text/byte_unicode.h"
#include "text/end_of_generation.h"
#include "text/pretokenizer.h"
#include "util/error.h"
#include "util/utf8.h"

namespace kvscope {
namespace {

// tokenizer.ggml.token_type values (llama.cpp's llama_token_type).
enum TokenType : std::int64_t {
  kUndefined = 0,
  kNormal = 1,
  kUnknown = 2,
  kControl = 3,
  kUserDefined = 4,
  kUnused = 5,
  kByte = 6,
};

constexpr const auto& kEogTexts = kEndOfGenerationTexts;

using TokenMap = std::unordered_map<std::string_view, TokenId>;  // views into pieces_

class BpeTokenizer final : public Tokenizer {
 public:
  explicit BpeTokenizer(const GgufFile& gguf);
  BpeTokenizer(const BpeTokenizer&) = delete;  // text_ids_ points into pieces_
  BpeTokenizer& operator=(const BpeTokenizer&) = delete;

  std::vector<TokenId> encode(std::string_view text, bool add_bos) const override;
  std::vector<TokenId> encode_parts(const std::vector<PromptPart>& parts,
                                    bool add_bos) const override;
  std::string token_bytes(TokenId id) const override { return bytes_[checked(id)]; }
  std::string piece(TokenId id) const override { return pieces_[checked(id)]; }
  std::int64_t vocab_size() const override { return static_cast<std::int64_t>(pieces_.size()); }
  TokenId bos() const override { return bos_; }
  TokenId eos() const override { return eos_; }
  TokenId eot() const override { return eot_; }
  bool add_bos_default() const override { return add_bos_; }
  bool is_special(TokenId id) const override { return special_type(types_[checked(id)]); }
  std::string kind() const override { return kind_; }
  bool is_end_of_generation(TokenId id) const override {
    return id >= 0 && id < vocab_size() && eog_[static_cast<std::size_t>(id)];
  }

 private:
  static bool special_type(std::int64_t type) { return type == kControl || type == kUserDefined; }
  std::size_t checked(TokenId id) const;
  TokenId special_id(const GgufFile& gguf, std::string_view key) const;
  void load_tokens(const GgufFile& gguf);
  void load_special_ids(const GgufFile& gguf);
  TokenMap index_tokens();  // returns every token by text
  void load_merges(const GgufFile& gguf, const TokenMap& all_ids);
  void encode_text(std::string_view text, std::vector<TokenId>& out) const;
  void encode_piece(std::string_view piece, std::vector<TokenId>& out) const;
  std::size_t match_special(std::string_view text, std::size_t pos, TokenId& id) const;

  std::string path_;
  Pretokenizer pretokenizer_;
  std::string kind_;
  std::vector<std::string> pieces_;  // [n_vocab] as stored, in the byte alphabet
  std::vector<std::string> bytes_;   // [n_vocab] what each token decodes to
  std::vector<std::int64_t> types_;  // [n_vocab]
  std::vector<bool> eog_;            // [n_vocab]
  TokenMap text_ids_;                // tokens text may produce (not special, unknown or unused)
  BpeMerges merges_;
  std::array<TokenId, 256> byte_ids_{};             // token of each byte; -1 when absent
  std::array<std::vector<TokenId>, 256> specials_;  // by first byte, longest first
  TokenId bos_ = -1;
  TokenId eos_ = -1;
  TokenId eot_ = -1;
  bool add_bos_ = false;
};

BpeTokenizer::BpeTokenizer(const GgufFile& gguf)
    : path_(gguf.path()), pretokenizer_(gguf.find_string("tokenizer.ggml.pre").value_or("")) {
  const std::string model = gguf.get_string("tokenizer.ggml.model");
  if (model != "gpt2") {
    throw_error<ModelError>("{}: tokenizer.ggml.model is '{}', not a byte-level BPE ('gpt2') vocab",
                            path_, printable_prefix(model));
  }
  const std::string& pre = pretokenizer_.pre();
  if (pretokenizer_.known()) {
    kind_ = fmt::format("bpe ({})", pre);
  } else if (pre.empty()) {
    kind_ = "bpe (default; no tokenizer.ggml.pre)";
  } else {
    kind_ = fmt::format("bpe (default; unknown pre '{}')", printable_prefix(pre));
  }
  load_tokens(gguf);
  load_special_ids(gguf);
  load_merges(gguf, index_tokens());
}

std::size_t BpeTokenizer::checked(TokenId id) const {
  if (id < 0 || id >= vocab_size()) {
    throw_error<TextError>("token id {} out of range (vocab size {})", id, vocab_size());
  }
  return static_cast<std::size_t>(id);
}

void BpeTokenizer::load_tokens(const GgufFile& gguf) {
  pieces_ = gguf.get_string_array("tokenizer.ggml.tokens");
  if (pieces_.empty()) throw_error<ModelError>("{}: tokenizer.ggml.tokens is empty", path_);
  if (pieces_.size() > static_cast<std::size_t>(std::numeric_limits<TokenId>::max())) {
    throw_error<ModelError>("{}: tokenizer.ggml.tokens has {} entries (at most {} supported)",
                            path_, pieces_.size(), std::numeric_limits<TokenId>::max());
  }
  if (gguf.has("tokenizer.ggml.token_type")) {
    types_ = gguf.get_int_array("tokenizer.ggml.token_type");
    if (types_.size() != pieces_.size()) {
      throw_error<ModelError>(
          "{}: tokenizer.ggml.token_type has {} entries but tokenizer.ggml.tokens has {}", path_,
          types_.size(), pieces_.size());
    }
    for (std::size_t i = 0; i < types_.size(); ++i) {
      if (types_[i] < kUndefined || types_[i] > kByte) {
        throw_error<ModelError>("{}: tokenizer.ggml.token_type[{}] = {} is not a token type (0..6)",
                                path_, i, types_[i]);
      }
    }
  } else {
    types_.assign(pieces_.size(), kNormal);
  }
}

TokenId BpeTokenizer::special_id(const GgufFile& gguf, std::string_view key) const {
  const std::optional<std::int64_t> id = gguf.find_int(key);
  if (!id) return -1;
  if (*id < 0 || *id >= vocab_size()) {
    throw_error<ModelError>("{}: {} = {} is out of range (vocab size {})", path_, key, *id,
                            vocab_size());
  }
  return static_cast<TokenId>(*id);
}

void BpeTokenizer::load_special_ids(const GgufFile& gguf) {
  bos_ = special_id(gguf, "tokenizer.ggml.bos_token_id");
  eos_ = special_id(gguf, "tokenizer.ggml.eos_token_id");
  eot_ = special_id(gguf, "tokenizer.ggml.eot_token_id");
  const TokenId eom = special_id(gguf, "tokenizer.ggml.eom_token_id");
  add_bos_ =
      gguf.find_bool("tokenizer.ggml.add_bos_token").value_or(pretokenizer_.add_bos_default()) &&
      bos_ >= 0;

  // Like llama.cpp: end-of-turn and end-of-generation tokens found by their text are
  // control tokens whatever their stored type, so user text can never produce them.
  eog_.assign(pieces_.size(), false);
  for (std::size_t i = 0; i < pieces_.size(); ++i) {
    if (std::find(kEogTexts.begin(), kEogTexts.end(), pieces_[i]) != kEogTexts.end()) {
      eog_[i] = true;
      types_[i] = kControl;
    }
  }
  for (const std::string_view text : kEogTexts) {
    for (std::size_t i = 0; eot_ < 0 && text != "<|eom_id|>" && i < pieces_.size(); ++i) {
      if (eog_[i] && pieces_[i] == text) eot_ = static_cast<TokenId>(i);
    }
  }
  for (const TokenId id : {eos_, eot_, eom}) {
    if (id >= 0) eog_[static_cast<std::size_t>(id)] = true;
  }
}

TokenMap BpeTokenizer::index_tokens() {
  bytes_.resize(pieces_.size());
  text_ids_.reserve(pieces_.size());
  TokenMap all_ids;
  all_ids.reserve(pieces_.size());
  for (std::size_t i = 0; i < pieces_.size(); ++i) {
    const std::string& p = pieces_[i];
    const std::int64_t type = types_[i];
    if (p.empty()) continue;  // llama.cpp tolerates empty entries; nothing can produce them
    if (const auto [it, fresh] = all_ids.emplace(p, static_cast<TokenId>(i)); !fresh) {
      throw_error<ModelError>("{}: tokenizer.ggml.tokens[{}] '{}' duplicates token {}", path_, i,
                              printable_prefix(p), it->second);
    }
    if (type == kUserDefined) {
      bytes_[i] = p;  // stored as plain text, not in the byte alphabet
    } else if (type != kControl && type != kUnknown && type != kUnused) {
      // A normal token outside the byte alphabet (not seen in real vocabs) decodes as its text.
      bytes_[i] = unicode_to_bytes(p).value_or(p);
      text_ids_.emplace(p, static_cast<TokenId>(i));
    }
    if (special_type(type)) {
      specials_[static_cast<std::uint8_t>(p[0])].push_back(static_cast<TokenId>(i));
    }
  }
  for (auto& ids : specials_) {
    std::stable_sort(ids.begin(), ids.end(), [&](TokenId a, TokenId b) {
      return pieces_[static_cast<std::size_t>(a)].size() >
             pieces_[static_cast<std::size_t>(b)].size();
    });
  }
  for (int b = 0; b < 256; ++b) {
    const auto it = text_ids_.find(byte_to_unicode(static_cast<std::uint8_t>(b)));
    byte_ids_[static_cast<std::size_t>(b)] = it == text_ids_.end() ? -1 : it->second;
  }
  return all_ids;
}

void BpeTokenizer::load_merges(const GgufFile& gguf, const TokenMap& all_ids) {
  if (!gguf.has("tokenizer.ggml.merges")) {
    throw_error<ModelError>("{}: tokenizer.ggml.merges is missing (a 'gpt2' vocab needs it)",
                            path_);
  }
  const std::vector<std::string> merges = gguf.get_string_array("tokenizer.ggml.merges");
  if (merges.size() > static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max())) {
    throw_error<ModelError>("{}: tokenizer.ggml.merges has {} entries", path_, merges.size());
  }
  merges_.reserve(merges.size());
  for (std::size_t rank = 0; rank < merges.size(); ++rank) {
    const std::string& m = merges[rank];
    const std::size_t space = m.size() < 2 ? std::string::npos : m.find(' ', 1);
    if (space == std::string::npos || space + 1 >= m.size()) {
      throw_error<ModelError>(
          "{}: tokenizer.ggml.merges[{}] '{}' is not two tokens separated by a space", path_, rank,
          printable_prefix(m));
    }
    const std::string_view left = std::string_view(m).substr(0, space);
    const std::string_view right = std::string_view(m).substr(space + 1);
    const std::string joined = std::string(left) + std::string(right);
    for (const std::string_view part : {left, right, std::string_view(joined)}) {
      if (!all_ids.contains(part)) {
        throw_error<ModelError>("{}: tokenizer.ggml.merges[{}] '{}': '{}' is not in the vocab",
                                path_, rank, printable_prefix(m), printable_prefix(part));
      }
    }
    // Merges into or out of special tokens can never fire on text: leave them out.
    const auto l = text_ids_.find(left);
    const auto r = text_ids_.find(right);
    const auto j = text_ids_.find(joined);
    if (l == text_ids_.end() || r == text_ids_.end() || j == text_ids_.end()) continue;
    merges_.add(l->second, r->second, static_cast<std::int32_t>(rank), j->second);
  }
}

// Merges one pre-token: its bytes become byte tokens, which BpeMerges merges.
void BpeTokenizer::encode_piece(std::string_view piece, std::vector<TokenId>& out) const {
  if (pretokenizer_.ignore_merges()) {
    const auto it = text_ids_.find(bytes_to_unicode(piece));
    if (it != text_ids_.end()) {
      out.push_back(it->second);
      return;
    }
  }
  std::vector<TokenId> symbols(piece.size());  // [n_bytes]
  for (std::size_t i = 0; i < piece.size(); ++i) {
    const auto byte = static_cast<std::uint8_t>(piece[i]);
    symbols[i] = byte_ids_[byte];
    if (symbols[i] < 0) {
      throw_error<TextError>("byte 0x{:02X} has no token in the vocab of {}", byte, path_);
    }
  }
  merges_.apply(symbols);
  out.insert(out.end(), symbols.begin(), symbols.end());
}

void BpeTokenizer::encode_text(std::string_view text, std::vector<TokenId>& out) const {
  for (const std::string_view piece : pretokenizer_.split(text)) encode_piece(piece, out);
}

// Length of the longest special token at text[pos] (0 when none); its id goes to `id`.
std::size_t BpeTokenizer::match_special(std::string_view text, std::size_t pos, TokenId& id) const {
  for (const TokenId candidate : specials_[static_cast<std::uint8_t>(text[pos])]) {
    const std::string& p = pieces_[static_cast<std::size_t>(candidate)];
    if (text.substr(pos).starts_with(p)) {
      id = candidate;
      return p.size();
    }
  }
  return 0;
}

std::vector<TokenId> BpeTokenizer::encode(std::string_view text, bool add_bos) const {
  std::vector<TokenId> out;
  if (add_bos && bos_ >= 0) out.push_back(bos_);
  encode_text(text, out);
  return out;
}

std::vector<TokenId> BpeTokenizer::encode_parts(const std::vector<PromptPart>& parts,
                                                bool add_bos) const {
  std::vector<TokenId> out;
  if (add_bos && bos_ >= 0) out.push_back(bos_);
  std::string run;  // text since the last special token, across part boundaries
  for (const PromptPart& part : parts) {
    if (part.kind == PromptPart::Kind::Text) {
      run += part.text;
      continue;
    }
    const std::string_view control = part.text;
    std::size_t plain_start = 0;
    for (std::size_t pos = 0; pos < control.size();) {
      TokenId id = -1;
      const std::size_t len = match_special(control, pos, id);
      if (len == 0) {
        ++pos;
        continue;
      }
      run += control.substr(plain_start, pos - plain_start);
      encode_text(run, out);
      run.clear();
      out.push_back(id);
      pos += len;
      plain_start = pos;
    }
    run += control.substr(plain_start);
  }
  encode_text(run, out);
  return out;
}

}  // namespace

std::unique_ptr<Tokenizer> make_bpe_tokenizer(const GgufFile& gguf) {
  return std::make_unique<BpeTokenizer>(gguf);
}

}  // namespace kvscope
