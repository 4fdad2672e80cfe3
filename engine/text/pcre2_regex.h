// One compiled PCRE2 pattern (UTF + UCP, JIT when available), as the pre-tokenizers use it:
// the GGUF byte-level BPE's built-in patterns and the patterns a tokenizer.json names.
// Invalid UTF-8 in a subject never matches (PCRE2_MATCH_INVALID_UTF), so stray bytes fall
// between matches instead of failing the search.
//
// A pattern from a file may be slow: PCRE2's match limit stops exponential backtracking,
// but `a*b|a` scans to the end of the text for every one-byte match (quadratic: 120 KB of
// "a" took 7.9 s). So each search runs on a window of the subject that doubles while the
// match could depend on what lies past it (a hard partial match) or while it runs out of
// match steps; every attempt is charged its window to a RegexBudget. A normal pattern's
// charge is a few bytes per byte of text; a budget linear in the request stops the rest.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace kvscope {

// The regex work one request may do, in bytes of subject handed to PCRE2 (each attempt's
// window; its match-step limit is proportional to it). TextError once spent.
class RegexBudget {
 public:
  // For a request of `text_bytes`: kBytesPerTextByte per byte plus kBaseBytes.
  static constexpr std::uint64_t kBytesPerTextByte = 256;
  static constexpr std::uint64_t kBaseBytes = std::uint64_t{1} << 20;
  static RegexBudget for_text(std::size_t text_bytes) {
    return RegexBudget(kBytesPerTextByte * text_bytes + kBaseBytes);
  }
  explicit RegexBudget(std::uint64_t limit) : limit_(limit) {}

  // Adds `bytes`; false once the total passes the limit (the caller throws, naming what).
  [[nodiscard]] bool charge(std::uint64_t bytes) {
    used_ += bytes;
    return used_ <= limit_;
  }
  std::uint64_t used() const { return used_; }
  std::uint64_t limit() const { return limit_; }

 private:
  std::uint64_t limit_;
  std::uint64_t used_ = 0;
};

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
  // steps one byte on (none of the tokenizer patterns matches empty). The work is charged
  // to `budget`; TextError quoting the pattern when it runs out or a search passes
  // PCRE2's limits. Without a budget, one sized for the subject alone.
  std::vector<Match> find_all(std::string_view subject, RegexBudget& budget) const;
  std::vector<Match> find_all(std::string_view subject) const;

 private:
  struct Code;
  std::unique_ptr<Code> code_;
};

}  // namespace kvscope
