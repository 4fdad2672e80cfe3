#define PCRE2_CODE_UNIT_WIDTH 8
#include "text/pcre2_regex.h"

#include <pcre2.h>
#include <algorithm>
#include <array>
#include <string>

#include "util/error.h"
#include "util/utf8.h"

namespace kvscope {
namespace {

// The first window of a search (bytes past its start): the tokenizer patterns' matches
// are a few bytes, so most searches end in it.
constexpr std::size_t kFirstWindow = 16;
// PCRE2 match steps an attempt may take per byte of its window (and at least kBaseSteps);
// a real pattern takes a few per byte. A search that needs more is retried on a doubled
// window, up to PCRE2's own default of 10 million steps, which ends it with an error.
constexpr std::uint32_t kStepsPerByte = 16;
constexpr std::uint32_t kBaseSteps = 1024;
constexpr std::uint64_t kMaxMatchSteps = 10'000'000;
// Backtracking memory of the interpreter (KiB) and its nesting depth: PCRE2's defaults are
// 20 GB and 10 million; the JIT keeps its own 32 KiB stack.
constexpr std::uint32_t kHeapLimitKib = 64 * 1024;
constexpr std::uint32_t kDepthLimit = 100'000;

std::string pcre2_message(int code) {
  std::array<PCRE2_UCHAR, 256> buffer{};
  pcre2_get_error_message(code, buffer.data(), buffer.size());
  return reinterpret_cast<const char*>(buffer.data());
}

// `at` moved forward to the start of a UTF-8 character (a window never cuts one).
std::size_t char_boundary(std::string_view text, std::size_t at) {
  while (at < text.size() && (static_cast<unsigned char>(text[at]) & 0xc0) == 0x80) ++at;
  return at;
}

// The pattern for an error message: printable ASCII, at most 40 bytes.
std::string quoted(std::string_view pattern) {
  std::string out = escape_bytes(pattern.substr(0, 40));
  if (pattern.size() > 40) out += "...";
  return "\"" + out + "\"";
}

}  // namespace

struct Pcre2Regex::Code {
  pcre2_code* code = nullptr;
  std::string pattern;  // quoted, for errors
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
  code_->pattern = quoted(pattern);
  // Optional: the interpreter is the fallback. Windows short of the text's end match
  // partially (see find_all), so both modes are compiled.
  pcre2_jit_compile(code_->code, PCRE2_JIT_COMPLETE | PCRE2_JIT_PARTIAL_HARD);
}

Pcre2Regex::~Pcre2Regex() = default;
Pcre2Regex::Pcre2Regex(Pcre2Regex&&) noexcept = default;
Pcre2Regex& Pcre2Regex::operator=(Pcre2Regex&&) noexcept = default;

std::vector<Pcre2Regex::Match> Pcre2Regex::find_all(std::string_view subject) const {
  RegexBudget budget = RegexBudget::for_text(subject.size());
  return find_all(subject, budget);
}

// Each search from `pos` runs on subject[0, end) with PCRE2_PARTIAL_HARD while end is short
// of the subject's end: a complete match or "no match starts before end" is then the same
// answer the whole subject gives (anything that depends on a byte at or past `end` is
// reported as partial instead), so the window doubles only when that happens, or when
// the attempt runs out of match steps. Lookbehinds still see the text before `pos`.
std::vector<Pcre2Regex::Match> Pcre2Regex::find_all(std::string_view subject,
                                                    RegexBudget& budget) const {
  std::vector<Match> matches;
  using MatchData = std::unique_ptr<pcre2_match_data, decltype(&pcre2_match_data_free)>;
  using Context = std::unique_ptr<pcre2_match_context, decltype(&pcre2_match_context_free)>;
  const MatchData data(pcre2_match_data_create_from_pattern(code_->code, nullptr),
                       &pcre2_match_data_free);
  const Context context(pcre2_match_context_create(nullptr), &pcre2_match_context_free);
  if (!data || !context) throw_error<TextError>("regex: out of memory for match data");
  pcre2_set_heap_limit(context.get(), kHeapLimitKib);
  pcre2_set_depth_limit(context.get(), kDepthLimit);
  const auto* text = reinterpret_cast<PCRE2_SPTR>(subject.data());
  std::size_t pos = 0;
  while (pos < subject.size()) {
    int rc = 0;
    std::size_t end = 0;
    for (std::uint64_t scope = kFirstWindow;; scope *= 2) {
      end = scope >= subject.size() - pos ? subject.size() : char_boundary(subject, pos + scope);
      const std::uint64_t steps = std::min(kMaxMatchSteps, kBaseSteps + kStepsPerByte * scope);
      if (!budget.charge(scope)) {
        throw_error<TextError>(
            "regex {} needs more work than this text allows (the budget of {} bytes scanned "
            "is spent at byte {} of {}; the pattern rescans the text for each match)",
            code_->pattern, budget.limit(), pos, subject.size());
      }
      pcre2_set_match_limit(context.get(), static_cast<std::uint32_t>(steps));
      const std::uint32_t partial = end < subject.size() ? PCRE2_PARTIAL_HARD : 0;
      rc = pcre2_match(code_->code, text, end, pos, partial, data.get(), context.get());
      if (rc == PCRE2_ERROR_PARTIAL && partial != 0) continue;
      if (rc == PCRE2_ERROR_MATCHLIMIT && steps < kMaxMatchSteps) continue;
      break;
    }
    if (rc == PCRE2_ERROR_NOMATCH) {
      if (end == subject.size()) break;
      pos = end;  // no match starts before `end`; search on from there
      continue;
    }
    if (rc < 0) {
      throw_error<TextError>("regex {}: search failed at byte {}: {}", code_->pattern, pos,
                             pcre2_message(rc));
    }
    const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(data.get());
    if (ovector[1] <= ovector[0]) {  // empty: step on rather than loop
      pos = ovector[0] + 1;
      continue;
    }
    matches.push_back({ovector[0], ovector[1]});
    pos = ovector[1];
  }
  return matches;
}

}  // namespace kvscope
