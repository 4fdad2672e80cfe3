// Pcre2Regex: searching in growing windows gives the matches one search of the whole text
// gives (checked against PCRE2 called directly, for the patterns real tokenizers use and a
// few with lookarounds and anchors), at a cost of a few bytes scanned per byte; a pattern
// that rescans the text for every match runs out of its budget with an error.
#define PCRE2_CODE_UNIT_WIDTH 8
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <pcre2.h>

#include <random>
#include <string>
#include <vector>

#include "text/pcre2_regex.h"
#include "util/error.h"

namespace kvscope {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

constexpr const char* kPatterns[] = {
    // GPT-2 / SmolLM2, Llama 3, Qwen2
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)",
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)",
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)",
    R"(\p{N})",
    R"([\p{P}!-/:-@\[-`{-~])",
    R"(\s)",
    // lookbehind, word boundaries, anchors, a match that may be empty
    R"((?<=a)b+|(?<! )x)",
    R"(\b\w+\b)",
    R"(^\s+|\s+$)",
    R"(a*)",
    R"([^a]*a{3,}?)",
};

// All matches as Pcre2Regex defines them, by one search of the whole subject at a time.
std::vector<Pcre2Regex::Match> reference_matches(const char* pattern, std::string_view subject) {
  int error = 0;
  PCRE2_SIZE offset = 0;
  pcre2_code* code =
      pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern), PCRE2_ZERO_TERMINATED,
                    PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF, &error, &offset, nullptr);
  pcre2_match_data* data = pcre2_match_data_create_from_pattern(code, nullptr);
  std::vector<Pcre2Regex::Match> out;
  for (std::size_t pos = 0; pos < subject.size();) {
    const int rc = pcre2_match(code, reinterpret_cast<PCRE2_SPTR>(subject.data()), subject.size(),
                               pos, 0, data, nullptr);
    if (rc < 0) break;
    const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(data);
    if (ov[1] <= ov[0]) {
      pos = ov[0] + 1;
      continue;
    }
    out.push_back({ov[0], ov[1]});
    pos = ov[1];
  }
  pcre2_match_data_free(data);
  pcre2_code_free(code);
  return out;
}

// Text with runs long and short of every class the patterns tell apart, and bad bytes.
std::string random_text(std::mt19937& rng) {
  const std::vector<std::string> pieces = {"a",    "b",  "x",   " ",  "  ", "\n",   "\r\n",
                                           "\t",   "'s", "'LL", "1",  "42", "é",    "你好",
                                           "🙂", ",",  "!?",  "ab", "-",  "\xff", "\xe4\xbd"};
  std::string text;
  const std::size_t n = rng() % 400;
  while (text.size() < n) {
    const std::string& p = pieces[rng() % pieces.size()];
    const std::size_t repeat = rng() % 8 == 0 ? 1 + rng() % 70 : 1;  // some long runs
    for (std::size_t i = 0; i < repeat; ++i) text += p;
  }
  return text;
}

TEST(Pcre2RegexTest, WindowedSearchFindsTheMatchesOfOneWholeSearch) {
  std::mt19937 rng(38);
  for (int round = 0; round < 300; ++round) {
    const std::string text = random_text(rng);
    for (const char* pattern : kPatterns) {
      const Pcre2Regex regex(pattern);
      const auto got = regex.find_all(text);
      const auto want = reference_matches(pattern, text);
      ASSERT_EQ(got.size(), want.size()) << "pattern " << pattern << " round " << round;
      for (std::size_t i = 0; i < got.size(); ++i) {
        ASSERT_EQ(got[i].begin, want[i].begin) << "pattern " << pattern << " match " << i;
        ASSERT_EQ(got[i].end, want[i].end) << "pattern " << pattern << " match " << i;
      }
    }
  }
}

// A real pattern's search scans a few bytes per byte of text, far inside the budget:
// short matches cost their first window, a long one about twice its length.
TEST(Pcre2RegexTest, RealPatternsScanAFewBytesPerByte) {
  std::mt19937 rng(7);
  std::string text;
  while (text.size() < 200'000) text += random_text(rng);
  text += std::string(100'000, 'a') + std::string(50'000, ' ');  // two long matches
  for (const char* pattern : {kPatterns[0], kPatterns[1], kPatterns[2]}) {
    RegexBudget budget = RegexBudget::for_text(text.size());
    const auto matches = Pcre2Regex(pattern).find_all(text, budget);
    EXPECT_EQ(matches.size(), reference_matches(pattern, text).size());
    EXPECT_LE(budget.used(), 32 * text.size()) << pattern;
  }
}

// `a*b|a` scans to the end of the text for each "a" it matches: 120 KB took 7.9 s. The
// scan is charged, and the budget (linear in the text) ends it with an error.
TEST(Pcre2RegexTest, APatternThatRescansTheTextRunsOutOfItsBudget) {
  const Pcre2Regex regex("a*b|a");
  const std::string text(120'000, 'a');
  RegexBudget budget = RegexBudget::for_text(text.size());
  try {
    regex.find_all(text, budget);
    ADD_FAILURE() << "no error";
  } catch (const TextError& e) {
    EXPECT_THAT(e.what(), AllOf(HasSubstr("regex \"a*b|a\" needs more work than this text allows"),
                                HasSubstr("rescans the text")));
  }
  EXPECT_LE(budget.used(), budget.limit() + 2 * text.size());

  // The same pattern on short runs is cheap and finds what it should.
  const auto matches = regex.find_all(std::string(1000, 'a') + "b" + std::string(3, 'a'));
  ASSERT_EQ(matches.size(), 4u);
  EXPECT_EQ(matches[0].end, 1001u);
}

// Exponential backtracking still ends on PCRE2's match limit, as a TextError.
TEST(Pcre2RegexTest, ExponentialBacktrackingIsAnError) {
  const Pcre2Regex regex("(a|aa)+c|b");
  EXPECT_THROW(regex.find_all(std::string(60, 'a')), TextError);
}

}  // namespace
}  // namespace kvscope
