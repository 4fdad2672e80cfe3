// What encoding one request may cost, so that a tokenizer.json cannot make a prompt cost
// more than a small multiple of its size. Its steps insert text the file chooses: unchecked,
// a Sequence of Replace steps took 64 bytes to 7 GB, and a Metaspace replacement of 1 MB
// took 4,000 spaces to 4 GB. Real steps insert "▁" for " " or prepend one (at most 4x a
// one-byte run). So:
// - per step: at most 8x its input plus 64 bytes, checked before the text is built;
// - per request: no text longer than 8x the request plus 4 KiB (and never past 128 MiB),
//   all steps together making at most 32 bytes per byte of it plus 1 MiB, and the regex
//   work of RegexBudget (pcre2_regex.h);
// - per file: at most 64 steps of each kind, each inserting at most 256 bytes.
// Internal to engine/text.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "text/pcre2_regex.h"

namespace kvscope {

constexpr std::size_t kMaxSteps = 64;
constexpr std::size_t kMaxInsertedBytes = 256;
constexpr std::size_t kMaxStepGrowth = 8;
constexpr std::size_t kStepGrowthSlack = 64;
constexpr std::size_t kRequestSlack = 4096;
constexpr std::size_t kMaxTextBytes = std::size_t{128} << 20;

// Throws TextError naming `step` when `out_bytes` made of `in_bytes` passes 8x + 64 or
// `max_bytes`.
void check_step_growth(std::string_view step, std::size_t in_bytes, std::size_t out_bytes,
                       std::size_t max_bytes = kMaxTextBytes);

// The budgets of one request; HfTokenizer::encode makes one per call.
class EncodeBudget {
 public:
  static constexpr std::uint64_t kMadePerTextByte = 32;
  static constexpr std::uint64_t kMadeSlack = std::uint64_t{1} << 20;

  explicit EncodeBudget(std::size_t request_bytes);

  RegexBudget& regex() { return regex_; }
  // The longest text any step may make in this request.
  std::size_t max_text_bytes() const { return max_text_; }
  // check_step_growth with this request's ceiling, before a step builds its text.
  void check_growth(std::string_view step, std::size_t in_bytes, std::size_t out_bytes) const {
    check_step_growth(step, in_bytes, out_bytes, max_text_);
  }
  // Adds the `bytes` one step made of one text to what this request's steps made; TextError
  // naming `step` past the ceiling or the total.
  void charge_made(std::string_view step, std::size_t bytes);

 private:
  std::size_t request_;
  std::size_t max_text_;
  std::uint64_t made_ = 0;
  std::uint64_t made_limit_;
  RegexBudget regex_;
};

// The size replace_all(text, pattern, content) makes, without making it.
std::size_t replaced_size(std::string_view text, std::string_view pattern,
                          std::string_view content);

}  // namespace kvscope
