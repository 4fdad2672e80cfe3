// One compiled PCRE2 pattern (UTF + UCP, JIT when available), as the pre-tokenizers use it:
// the GGUF byte-level BPE's built-in patterns and the patterns a tokenizer.json names.
// Invalid UTF-8 in a subject never matches (PCRE2_MATCH_INVALID_UTF), so stray bytes fall
// between matches instead of failing the search.
#pragma once

#include <cstddef>
#include <memory>
#include <string_view>
#include <vector>

namespace kvscope {

class Pcre2Regex {
 public:
  struct Match {
    std::size_t begin;
    std::size_t end;  // one past the last byte
  };

  // Throws TextError "does not compile at offset N: REASON" (the caller adds which file).
  explicit Pcre2Regex(std::string_view pattern);
  ~Pcre2Regex();
  Pcre2Regex(Pcre2Regex&&) noexcept;
  Pcre2Regex& operator=(Pcre2Regex&&) noexcept;

  // The non-empty, non-overlapping matches in `subject`, left to right. An empty match
  // steps one byte on (none of the tokenizer patterns matches empty).
  std::vector<Match> find_all(std::string_view subject) const;

 private:
  struct Code;
  std::unique_ptr<Code> code_;
};

}  // namespace kvscope
