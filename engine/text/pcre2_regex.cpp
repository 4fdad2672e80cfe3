#define PCRE2_CODE_UNIT_WIDTH 8
#include "text/pcre2_regex.h"

#include <pcre2.h>
#include <array>
#include <string>

#include "util/error.h"

namespace kvscope {
namespace {

std::string pcre2_message(int code) {
  std::array<PCRE2_UCHAR, 256> buffer{};
  pcre2_get_error_message(code, buffer.data(), buffer.size());
  return reinterpret_cast<const char*>(buffer.data());
}

}  // namespace

struct Pcre2Regex::Code {
  pcre2_code* code = nullptr;
  ~Code() { pcre2_code_free(code); }
};

Pcre2Regex::Pcre2Regex(std::string_view pattern) : code_(std::make_unique<Code>()) {
  int error = 0;
  PCRE2_SIZE offset = 0;
  code_->code =
      pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                    PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF, &error, &offset, nullptr);
  if (code_->code == nullptr) {
    throw_error<TextError>("regex does not compile at offset {}: {}", offset, pcre2_message(error));
  }
  pcre2_jit_compile(code_->code, PCRE2_JIT_COMPLETE);  // optional: the interpreter is the fallback
}

Pcre2Regex::~Pcre2Regex() = default;
Pcre2Regex::Pcre2Regex(Pcre2Regex&&) noexcept = default;
Pcre2Regex& Pcre2Regex::operator=(Pcre2Regex&&) noexcept = default;

std::vector<Pcre2Regex::Match> Pcre2Regex::find_all(std::string_view subject) const {
  std::vector<Match> matches;
  pcre2_match_data* data = pcre2_match_data_create_from_pattern(code_->code, nullptr);
  if (data == nullptr) throw_error<TextError>("regex: out of memory for match data");
  const auto* text = reinterpret_cast<PCRE2_SPTR>(subject.data());
  std::size_t pos = 0;
  while (pos < subject.size()) {
    const int rc = pcre2_match(code_->code, text, subject.size(), pos, 0, data, nullptr);
    if (rc == PCRE2_ERROR_NOMATCH) break;
    if (rc < 0) {
      pcre2_match_data_free(data);
      throw_error<TextError>("regex match failed: {}", pcre2_message(rc));
    }
    const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(data);
    if (ovector[1] <= ovector[0]) {  // empty: step on rather than loop
      pos = ovector[0] + 1;
      continue;
    }
    matches.push_back({ovector[0], ovector[1]});
    pos = ovector[1];
  }
  pcre2_match_data_free(data);
  return matches;
}

}  // namespace kvscope
