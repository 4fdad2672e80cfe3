// tokenizer.json "added_tokens": pieces matched in the text before anything else, as the HF
// library's AddedVocabulary does: leftmost-longest, the ones with normalized = false on the
// raw text, the others on the normalized text; lstrip / rstrip swallow the whitespace
// beside a match, single_word takes it only between non-word characters. A special token
// is taken only where the caller allows it (template control text); elsewhere it is text,
// its match still consumed (as the library's encode_special_tokens skips it).
// Internal to engine/text.
#pragma once

#include <array>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "text/pcre2_regex.h"
#include "text/tokenizer.h"

namespace kvscope {

struct HfAddedToken {
  TokenId id = -1;
  std::string content;
  bool special = false;
  bool normalized = true;
  bool lstrip = false;
  bool rstrip = false;
  bool single_word = false;
};

class HfAddedTokens {
 public:
  // A stretch of text: an added token (id >= 0) or text to go on (id == -1).
  struct Segment {
    std::size_t begin;
    std::size_t end;
    TokenId id;
  };
  // Whether a special token may be taken at text[begin, end).
  using AllowSpecial = std::function<bool(std::size_t begin, std::size_t end)>;

  // `config` is the "added_tokens" list (null: none). ModelError naming `source`.
  HfAddedTokens(const nlohmann::json& config, const std::string& source);

  // `text` cut at the tokens of one pass (normalized == false: the raw pass).
  std::vector<Segment> split(std::string_view text, bool normalized,
                             const AllowSpecial& allow) const;

  const std::vector<HfAddedToken>& tokens() const { return tokens_; }

 private:
  const HfAddedToken* longest_at(std::string_view text, std::size_t pos, bool normalized) const;
  bool is_word_char(std::string_view ch) const;
  bool word_boundaries(std::string_view text, std::size_t begin, std::size_t end) const;

  std::vector<HfAddedToken> tokens_;
  std::array<std::vector<std::size_t>, 256> by_first_byte_;  // indices, longest first
  Pcre2Regex word_char_{R"(\A[\p{L}\p{N}]\z)"};  // one character: Rust's char::is_alphanumeric
};

}  // namespace kvscope
