// tokenizer.json "added_tokens": pieces matched in the text before anything else, as the HF
// library's AddedVocabulary does: leftmost-longest, the ones with normalized = false on the
// raw text, the others on the normalized text; lstrip / rstrip swallow the whitespace
// beside a match, single_word takes it only between non-word characters. A special token
// is taken only where the caller allows it (template control text); elsewhere it is text,
// its match still consumed (as the library's encode_special_tokens skips it). The tokens are
// found in one pass linear in the text (AddedTokenMatcher), as the library's Aho-Corasick.
// Internal to engine/text.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "text/added_token_matcher.h"
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

  // At most this many tokens and bytes of content in all: real files list at most a few
  // thousand short tokens (Gemma 3 ~6,400); the matcher holds ~50 bytes per content byte.
  static constexpr std::size_t kMaxTokens = std::size_t{1} << 19;
  static constexpr std::size_t kMaxContentBytes = std::size_t{1} << 20;

  // `config` is the "added_tokens" list (null: none). ModelError naming `source`.
  HfAddedTokens(const nlohmann::json& config, const std::string& source);

  // `text` cut at the tokens of one pass (normalized == false: the raw pass).
  std::vector<Segment> split(std::string_view text, bool normalized,
                             const AllowSpecial& allow) const;

  const std::vector<HfAddedToken>& tokens() const { return tokens_; }

 private:
  bool is_word_char(std::string_view ch) const;
  bool word_boundaries(std::string_view text, std::size_t begin, std::size_t end) const;

  std::vector<HfAddedToken> tokens_;
  AddedTokenMatcher raw_;                        // the tokens with normalized == false
  AddedTokenMatcher normalized_;                 // and the others
  Pcre2Regex word_char_{R"(\A[\p{L}\p{N}]\z)"};  // one character: Rust's char::is_alphanumeric
};

}  // namespace kvscope
