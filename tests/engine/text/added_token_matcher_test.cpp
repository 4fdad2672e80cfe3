// AddedTokenMatcher: the longest token starting at each byte, as testing every token at
// every byte finds it, in a number of steps linear in the text whatever the tokens share.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "text/added_token_matcher.h"

namespace kvscope {
namespace {

// The index of the longest of `tokens` starting at each byte (the first of equal ones).
std::vector<std::int32_t> brute_force(const std::vector<std::string>& tokens,
                                      std::string_view text) {
  std::vector<std::int32_t> out(text.size(), -1);
  for (std::size_t pos = 0; pos < text.size(); ++pos) {
    std::size_t best = 0;
    for (std::size_t i = 0; i < tokens.size(); ++i) {
      if (tokens[i].size() > best && text.substr(pos).starts_with(tokens[i])) {
        best = tokens[i].size();
        out[pos] = static_cast<std::int32_t>(i);
      }
    }
  }
  return out;
}

AddedTokenMatcher matcher_of(const std::vector<std::string>& tokens) {
  AddedTokenMatcher m;
  for (std::size_t i = 0; i < tokens.size(); ++i) m.add(tokens[i], static_cast<std::int32_t>(i));
  m.build();
  return m;
}

TEST(AddedTokenMatcherTest, FindsTheLongestTokenAtEachByteAsTestingEachTokenDoes) {
  std::mt19937 rng(38);
  for (int round = 0; round < 200; ++round) {
    // Tokens and text over a small alphabet, so tokens overlap, nest and repeat.
    const std::string alphabet = round % 2 ? "ab" : "abc<>|";
    const auto random_text = [&](std::size_t max_len) {
      std::string s(1 + rng() % max_len, 'a');
      for (char& c : s) c = alphabet[rng() % alphabet.size()];
      return s;
    };
    std::vector<std::string> tokens;
    for (std::size_t n = 1 + rng() % 12; tokens.size() < n;) tokens.push_back(random_text(6));
    const std::string text = random_text(200);
    EXPECT_EQ(matcher_of(tokens).longest_at_each(text), brute_force(tokens, text))
        << "round " << round;
  }
}

TEST(AddedTokenMatcherTest, MultiByteTokensAndTheFirstOfEqualContentsWin) {
  const std::vector<std::string> tokens = {"<|im_end|>", "\xe2\x96\x81\xe2\x96\x81", "<|im_end|>",
                                           "<|im", "\xe2\x96\x81"};
  const std::string text = "x<|im_end|>\xe2\x96\x81\xe2\x96\x81\xe2\x96\x81<|i";
  const auto got = matcher_of(tokens).longest_at_each(text);
  EXPECT_EQ(got, brute_force(tokens, text));
  EXPECT_EQ(got[1], 0);   // not 2: the same content listed again
  EXPECT_EQ(got[11], 1);  // "▁▁" over "▁"
  EXPECT_EQ(got[17], 4);  // the last "▁" alone
}

// 20,000 tokens sharing a 10-byte prefix took 10 s on 50 KB (each byte tested every
// token); the automaton takes at most two steps per byte.
TEST(AddedTokenMatcherTest, TokensSharingAPrefixCostStepsLinearInTheText) {
  std::vector<std::string> tokens;
  for (int i = 0; i < 20000; ++i) tokens.push_back(std::string(10, 'a') + std::to_string(i));
  const AddedTokenMatcher m = matcher_of(tokens);
  std::string text;
  while (text.size() < 50000) text += std::string(10, 'a') + "1234" + std::string(7, 'a');
  std::size_t steps = 0;
  const auto got = m.longest_at_each(text, &steps);
  EXPECT_LE(steps, 2 * text.size());
  EXPECT_EQ(got[0], 1234);
  EXPECT_EQ(got[1], -1);
  EXPECT_EQ(got[21], 1234);

  steps = 0;
  m.longest_at_each(std::string(50000, 'a'), &steps);
  EXPECT_LE(steps, 2 * 50000);
}

TEST(AddedTokenMatcherTest, NoTokensMatchNothing) {
  AddedTokenMatcher m;
  m.build();
  EXPECT_TRUE(m.empty());
  EXPECT_EQ(m.longest_at_each("abc"), std::vector<std::int32_t>(3, -1));
}

}  // namespace
}  // namespace kvscope
