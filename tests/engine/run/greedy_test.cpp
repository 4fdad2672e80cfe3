// greedy_pick is the sampler's temperature-0 pick without its logits copy: the same id on
// every row, and the same rows refused (greedy.h). The device argmax is tested against it
// in tests/kernels.
#include "run/greedy.h"

#include <limits>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "run/sampler.h"
#include "util/error.h"

namespace kvscope {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNan = std::numeric_limits<float>::quiet_NaN();

SamplingParams greedy_params() {
  SamplingParams p;
  p.temperature = 0.0f;
  return p;
}

TEST(GreedyPick, AgreesWithTheSamplerAtTemperatureZeroOnRowsWithTies) {
  Sampler sampler(greedy_params());
  ASSERT_TRUE(sampler.picks_greedily());
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> coarse(-4, 4);  // few values: many ties for the maximum
  for (int row = 0; row < 200; ++row) {
    std::vector<float> logits(1 + static_cast<std::size_t>(row % 97));
    for (float& v : logits) v = static_cast<float>(coarse(rng)) * 0.5f;
    if (row % 5 == 0 && logits.size() > 1)
      logits[static_cast<std::size_t>(row) % logits.size()] = -kInf;
    const TokenId want = sampler.sample(logits, {});
    EXPECT_EQ(greedy_pick(logits), want) << "row " << row;
  }
}

TEST(GreedyPick, TheLowestIdWinsATie) {
  EXPECT_EQ(greedy_pick(std::vector<float>{1.0f, 3.0f, -2.0f, 3.0f}), 1);
  EXPECT_EQ(greedy_pick(std::vector<float>{-kInf, -5.0f, -5.0f}), 1);
  EXPECT_EQ(greedy_pick(std::vector<float>{std::numeric_limits<float>::lowest(), -kInf}), 0);
}

TEST(GreedyPick, RefusesTheRowsTheSamplerRefuses) {
  EXPECT_EQ(greedy_pick(std::vector<float>{0.0f, kNan, 9.0f}), kPickInvalidLogit);
  EXPECT_EQ(greedy_pick(std::vector<float>{0.0f, 1.0f, kInf}), kPickInvalidLogit);
  EXPECT_EQ(greedy_pick(std::vector<float>{-kInf, -kInf}), kPickAllMasked);
  EXPECT_EQ(greedy_pick(std::vector<float>{}), kPickAllMasked);

  Sampler sampler(greedy_params());
  EXPECT_THROW(sampler.sample(std::vector<float>{0.0f, kNan, 9.0f}, {}), UsageError);
  EXPECT_THROW(sampler.sample(std::vector<float>{-kInf, -kInf}, {}), UsageError);
}

TEST(GreedyPick, ErrorsNameWhatIsWrong) {
  const std::string invalid = greedy_pick_error(kPickInvalidLogit);
  EXPECT_NE(invalid.find("nan or +inf"), std::string::npos) << invalid;
  const std::string masked = greedy_pick_error(kPickAllMasked);
  EXPECT_NE(masked.find("every logit is -inf"), std::string::npos) << masked;
}

TEST(GreedyPick, OnlyPlainGreedySamplersMayBeReplacedByIt) {
  SamplingParams p = greedy_params();
  EXPECT_TRUE(Sampler(p).picks_greedily());
  p.repeat_penalty = 1.1f;
  EXPECT_FALSE(Sampler(p).picks_greedily());
  p.repeat_last_n = 0;  // a penalty over no tokens is no penalty
  EXPECT_TRUE(Sampler(p).picks_greedily());
  p.temperature = 0.7f;
  EXPECT_FALSE(Sampler(p).picks_greedily());
}

}  // namespace
}  // namespace kvscope
