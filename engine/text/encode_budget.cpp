#include "text/encode_budget.h"

#include <algorithm>

#include "util/error.h"

namespace kvscope {

void check_step_growth(std::string_view step, std::size_t in_bytes, std::size_t out_bytes,
                       std::size_t max_bytes) {
  if (out_bytes > kMaxStepGrowth * in_bytes + kStepGrowthSlack) {
    throw_error<TextError>(
        "{}: would grow the text from {} to {} bytes (a step may make at most {}x its input "
        "plus {} bytes)",
        step, in_bytes, out_bytes, kMaxStepGrowth, kStepGrowthSlack);
  }
  if (out_bytes > max_bytes) {
    throw_error<TextError>("{}: would make {} bytes of text, more than the {} this request allows",
                           step, out_bytes, max_bytes);
  }
}

EncodeBudget::EncodeBudget(std::size_t request_bytes)
    : request_(request_bytes),
      max_text_(std::min(kMaxTextBytes, kMaxStepGrowth * request_bytes + kRequestSlack)),
      made_limit_(kMadePerTextByte * request_bytes + kMadeSlack),
      regex_(RegexBudget::for_text(request_bytes)) {}

void EncodeBudget::charge_made(std::string_view step, std::size_t bytes) {
  if (bytes > max_text_) {
    throw_error<TextError>("{}: made {} bytes of text, more than the {} this request allows", step,
                           bytes, max_text_);
  }
  made_ += bytes;
  if (made_ > made_limit_) {
    throw_error<TextError>(
        "{}: the tokenizer's steps would make more than {} bytes of text for this {}-byte "
        "request",
        step, made_limit_, request_);
  }
}

std::size_t replaced_size(std::string_view text, std::string_view pattern,
                          std::string_view content) {
  if (pattern.empty()) return text.size();
  std::size_t hits = 0;
  for (std::size_t at = text.find(pattern); at != std::string_view::npos;
       at = text.find(pattern, at + pattern.size())) {
    ++hits;
  }
  return text.size() - hits * pattern.size() + hits * content.size();
}

}  // namespace kvscope
