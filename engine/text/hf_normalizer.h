// tokenizer.json "normalizer": text rewrites applied before pre-tokenization, to each run
// of text between added tokens (so Llama 2's Prepend("▁") puts a "▁" after every special
// token, where SentencePiece adds its dummy prefix). Supported: Prepend, Replace (String or
// Regex pattern), Strip, NFC / NFD / NFKC / NFKD, Lowercase, and Sequence of those. Each step
// is bounded in what it may make of its input (encode_budget.h); an error names the step.
// Internal to engine/text (exposes nlohmann::json).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "text/encode_budget.h"
#include "text/pcre2_regex.h"

namespace kvscope {

class HfNormalizer {
 public:
  // `config` is the "normalizer" value (null: text is left as it is). Throws ModelError
  // naming `source` and the component for an unknown type or a malformed field.
  HfNormalizer(const nlohmann::json& config, const std::string& source);

  // `text` (valid UTF-8) rewritten; "" stays "" (HF prepends nothing to an empty run).
  // Steps charge `budget`. TextError naming the step past its bounds or the budget's.
  std::string apply(std::string text, EncodeBudget& budget) const;

 private:
  enum class Kind { Prepend, Replace, Strip, Unicode, Lowercase };
  struct Step {
    Kind kind;
    std::string text;     // Prepend: what; Replace: the literal pattern; Unicode: the form
    std::string content;  // Replace: the replacement
    std::shared_ptr<const Pcre2Regex> regex;  // Replace with a Regex pattern
    bool left = false;                        // Strip
    bool right = false;                       // Strip
    std::string name = {};  // for errors: "tokenizer.json: normalizer Sequence[2] Replace"
  };
  static std::string run(const Step& step, const std::string& text, EncodeBudget& budget);
  void add(const nlohmann::json& config, const std::string& source, int depth);

  std::vector<Step> steps_;
};

// Replaces every non-overlapping occurrence of `pattern` (left to right) in `text`.
std::string replace_all(std::string_view text, std::string_view pattern, std::string_view content);

// A Split / Replace "pattern" ({"String": s} or {"Regex": r}): the literal in `literal`, or
// a compiled regex. ModelError naming `where` when the regex does not compile.
std::shared_ptr<const Pcre2Regex> read_hf_pattern(const nlohmann::json& pattern,
                                                  const std::string& where, std::string& literal);

// Decodes the code point at text[i] (text is valid UTF-8) and advances i past it.
char32_t next_code_point(std::string_view text, std::size_t& i);

// True for Unicode White_Space characters (Rust's char::is_whitespace).
bool is_unicode_space(char32_t c);

}  // namespace kvscope
