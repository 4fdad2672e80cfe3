#include "run/sampler.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "util/error.h"

namespace kvscope {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

// Only the filter under test on: temperature 1, everything else off.
SamplingParams plain(std::uint64_t seed = 1) {
  SamplingParams p;
  p.temperature = 1.0f;
  p.top_k = 0;
  p.top_p = 1.0f;
  p.min_p = 0.0f;
  p.seed = seed;
  return p;
}

SamplingParams greedy() {
  SamplingParams p = plain();
  p.temperature = 0.0f;
  return p;
}

// Logits whose softmax is exactly `probs`.
std::vector<float> logits_of(const std::vector<double>& probs) {
  std::vector<float> l;
  for (const double p : probs) l.push_back(p > 0 ? static_cast<float>(std::log(p)) : -kInf);
  return l;
}

// How often each token comes out in n draws.
std::map<TokenId, int> histogram(Sampler& sampler, const std::vector<float>& logits, int n) {
  std::map<TokenId, int> counts;
  for (int i = 0; i < n; ++i) counts[sampler.sample(logits, {})]++;
  return counts;
}

std::vector<float> random_logits(std::size_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, 3.0f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

TEST(Sampler, GreedyPicksTheHighestLogitAndTheLowestIdOnTies) {
  Sampler sampler(greedy());
  EXPECT_EQ(sampler.sample(std::vector<float>{0.1f, 2.5f, -1.0f, 2.4f}, {}), 1);
  EXPECT_EQ(sampler.sample(std::vector<float>{1.0f, 3.0f, 3.0f, 3.0f}, {}), 1);
  EXPECT_EQ(sampler.sample(std::vector<float>{-kInf, -kInf, -5.0f}, {}), 2);
}

TEST(Sampler, TheSameSeedGivesTheSameTokens) {
  const auto logits = random_logits(200, 3);
  SamplingParams p = plain(1234);
  Sampler a(p);
  Sampler b(p);
  p.seed = 99;
  Sampler c(p);
  std::vector<TokenId> from_a, from_b, from_c;
  for (int i = 0; i < 100; ++i) {
    from_a.push_back(a.sample(logits, {}));
    from_b.push_back(b.sample(logits, {}));
    from_c.push_back(c.sample(logits, {}));
  }
  EXPECT_EQ(from_a, from_b);
  EXPECT_NE(from_a, from_c);
}

TEST(Sampler, TopKOfOneIsGreedyWhateverTheSeed) {
  for (std::uint32_t seed = 0; seed < 50; ++seed) {
    const auto logits = random_logits(300, seed);
    SamplingParams p = SamplingParams{};  // the defaults, temperature 0.8
    p.top_k = 1;
    p.seed = seed;
    Sampler sampler(p);
    Sampler argmax(greedy());
    ASSERT_EQ(sampler.sample(logits, {}), argmax.sample(logits, {})) << "seed " << seed;
  }
}

TEST(Sampler, DrawsFollowTheSoftmax) {
  const std::vector<double> probs{0.1, 0.2, 0.3, 0.4};
  Sampler sampler(plain(7));
  const auto counts = histogram(sampler, logits_of(probs), 20000);
  for (TokenId id = 0; id < 4; ++id) {
    EXPECT_NEAR(counts.at(id) / 20000.0, probs[static_cast<std::size_t>(id)], 0.015)
        << "token " << id;
  }
}

TEST(Sampler, TopKKeepsOnlyTheKHighest) {
  SamplingParams p = plain(11);
  p.top_k = 3;
  Sampler sampler(p);
  const auto counts =
      histogram(sampler, std::vector<float>{1.0f, 0.9f, 1.2f, 0.8f, 1.1f, 0.0f}, 3000);
  EXPECT_EQ(counts.size(), 3u);
  EXPECT_GT(counts.at(0), 500);
  EXPECT_GT(counts.at(2), 500);
  EXPECT_GT(counts.at(4), 500);
}

// The chain as sampler.h states it, the slow way: every unmasked token sorted by logit (the
// lower id first on ties), the first top_k kept, then top_p and min_p on the sorted list, and
// the draw from one mt19937_64 output per token, with the sampler's own arithmetic.
struct ReferenceSampler {
  SamplingParams p;
  std::mt19937_64 rng{p.seed};

  TokenId sample(const std::vector<float>& logits) {
    std::vector<std::pair<float, TokenId>> c;
    for (std::size_t i = 0; i < logits.size(); ++i) {
      if (logits[i] != -kInf) c.emplace_back(logits[i], static_cast<TokenId>(i));
    }
    std::sort(c.begin(), c.end(), [](const auto& a, const auto& b) {
      return a.first > b.first || (a.first == b.first && a.second < b.second);
    });
    if (p.top_k > 0 && c.size() > static_cast<std::size_t>(p.top_k)) {
      c.resize(static_cast<std::size_t>(p.top_k));
    }
    std::vector<double> e;
    double total = 0.0;
    for (const auto& [logit, id] : c) {
      e.push_back(std::exp(static_cast<double>(logit - c.front().first)));
      total += e.back();
    }
    double cumulative = 0.0;
    for (std::size_t i = 0; i < c.size(); ++i) {
      cumulative += e[i];
      if (cumulative >= static_cast<double>(p.top_p) * total) {
        c.resize(i + 1);
        break;
      }
    }
    const float threshold = c.front().first + std::log(p.min_p);
    std::erase_if(c, [&](const auto& x) { return p.min_p > 0.0f && x.first < threshold; });
    e.clear();
    total = 0.0;
    for (const auto& [logit, id] : c) {
      e.push_back(std::exp(static_cast<double>(logit - c.front().first) /
                           static_cast<double>(p.temperature)));
      total += e.back();
    }
    const double target = static_cast<double>(rng() >> 11) * 0x1.0p-53 * total;
    cumulative = 0.0;
    for (std::size_t i = 0; i < c.size(); ++i) {
      cumulative += e[i];
      if (target < cumulative) return c[i].second;
    }
    return c.back().second;
  }
};

// top_k with top_p picks its k in one pass over the logits, not by partitioning a copy of the
// vocabulary: the tokens must be those of sorting it all, draw for draw, whatever the seed,
// with ties at the k-th logit, masked tokens, and fewer unmasked tokens than k.
TEST(Sampler, TopKSelectionDrawsWhatSortingTheWholeVocabularyDraws) {
  for (std::uint32_t seed = 0; seed < 40; ++seed) {
    std::vector<float> logits = random_logits(seed < 4 ? 49152 : 3000, seed);
    if (seed % 4 == 1) {
      for (float& x : logits) x = std::round(x);  // many ties, at the k-th logit too
    } else if (seed % 4 == 2) {
      for (std::size_t i = 0; i < logits.size(); ++i) {
        if (i % 3 != 0) logits[i] = -kInf;
      }
    } else if (seed % 4 == 3) {
      for (std::size_t i = 0; i < logits.size(); ++i) {
        if (i % 150 != 7) logits[i] = -kInf;  // 20 left, fewer than most k below
      }
    }
    for (const int k : {1, 2, 40, 64, 5000}) {
      SamplingParams p;  // the defaults: temperature 0.8, top_p 0.95, min_p 0.05
      p.top_k = k;
      p.top_p = seed % 2 == 0 ? 0.95f : 0.6f;
      p.min_p = seed % 3 == 0 ? 0.0f : 0.05f;
      p.temperature = seed % 5 == 0 ? 1.7f : 0.8f;
      p.seed = seed;
      Sampler sampler(p);
      ReferenceSampler reference{p};
      for (int draw = 0; draw < 8; ++draw) {
        ASSERT_EQ(sampler.sample(logits, {}), reference.sample(logits))
            << "seed " << seed << ", top_k " << k << ", draw " << draw;
      }
    }
  }
}

TEST(Sampler, TopPKeepsTheSmallestSetReachingP) {
  // 0.5 + 0.3 = 0.8 >= 0.75: tokens 0 and 1 stay, 2 and 3 never appear.
  const auto logits = logits_of({0.5, 0.3, 0.15, 0.05});
  SamplingParams p = plain(13);
  p.top_p = 0.75f;
  Sampler sampler(p);
  const auto counts = histogram(sampler, logits, 4000);
  EXPECT_EQ(counts.size(), 2u);
  EXPECT_NEAR(counts.at(0) / 4000.0, 0.5 / 0.8, 0.03);  // renormalised over the kept two
  EXPECT_NEAR(counts.at(1) / 4000.0, 0.3 / 0.8, 0.03);
  Sampler all(plain(13));
  EXPECT_EQ(histogram(all, logits, 4000).size(), 4u);  // and without top-p they do appear
}

TEST(Sampler, MinPDropsTokensBelowAFractionOfTheTopOne) {
  // min_p 0.1 of 0.6 is 0.06: 0.07 stays, 0.03 goes.
  const auto logits = logits_of({0.6, 0.3, 0.07, 0.03});
  SamplingParams p = plain(17);
  p.min_p = 0.1f;
  Sampler sampler(p);
  const auto counts = histogram(sampler, logits, 6000);
  EXPECT_EQ(counts.count(3), 0u);
  EXPECT_GT(counts.at(2), 200);
}

TEST(Sampler, LowTemperatureSharpensAndHighTemperatureFlattens) {
  const auto logits = logits_of({0.7, 0.2, 0.1});
  SamplingParams cold = plain(19);
  cold.temperature = 0.1f;
  SamplingParams hot = plain(19);
  hot.temperature = 10.0f;
  Sampler cold_sampler(cold);
  Sampler hot_sampler(hot);
  EXPECT_GT(histogram(cold_sampler, logits, 2000)[0], 1980);
  const auto flat = histogram(hot_sampler, logits, 6000);
  EXPECT_GT(flat.at(2), 1500);  // ~0.29 at T=10, 0.1 at T=1
}

TEST(Sampler, RepeatPenaltyDividesPositiveAndMultipliesNegativeLogits) {
  SamplingParams p = greedy();
  p.repeat_penalty = 1.1f;
  Sampler sampler(p);
  const std::vector<TokenId> recent{0};
  // 2.0 / 1.1 = 1.82 < 1.9
  EXPECT_EQ(sampler.sample(std::vector<float>{2.0f, 1.9f}, recent), 1);
  EXPECT_EQ(sampler.sample(std::vector<float>{2.0f, 1.7f}, recent), 0);
  // -1.0 * 1.1 = -1.1 < -1.05
  EXPECT_EQ(sampler.sample(std::vector<float>{-1.0f, -1.05f}, recent), 1);
  // Without the penalty, token 0 wins both.
  Sampler neutral(greedy());
  EXPECT_EQ(neutral.sample(std::vector<float>{2.0f, 1.9f}, recent), 0);
  EXPECT_EQ(neutral.sample(std::vector<float>{-1.0f, -1.05f}, recent), 0);
}

TEST(Sampler, RepeatPenaltyLooksOnlyAtTheLastNTokensAndCountsEachOnce) {
  SamplingParams p = greedy();
  p.repeat_penalty = 1.1f;
  p.repeat_last_n = 2;
  Sampler sampler(p);
  const std::vector<float> logits{2.0f, 1.9f, 1.0f};
  EXPECT_EQ(sampler.sample(logits, std::vector<TokenId>{0, 2, 2}), 0);  // 0 is outside the window
  EXPECT_EQ(sampler.sample(logits, std::vector<TokenId>{2, 0, 0}), 1);  // once, not twice: 1.82
  p.repeat_last_n = -1;
  Sampler whole(p);
  EXPECT_EQ(whole.sample(logits, std::vector<TokenId>{0, 2, 2}), 1);
}

TEST(Sampler, FrequencyPenaltyTakesOffOncePerOccurrenceInTheWindow) {
  SamplingParams p = greedy();
  p.frequency_penalty = 0.25f;
  p.repeat_last_n = 3;
  Sampler sampler(p);
  const std::vector<float> logits{2.0f, 1.6f, 1.0f};
  EXPECT_EQ(sampler.sample(logits, std::vector<TokenId>{1, 0}), 0);        // 1.75 > 1.35
  EXPECT_EQ(sampler.sample(logits, std::vector<TokenId>{0, 0}), 1);        // 1.5 < 1.6
  EXPECT_EQ(sampler.sample(logits, std::vector<TokenId>{0, 0, 1, 2}), 0);  // one 0 left: 1.75
  EXPECT_FALSE(sampler.picks_greedily());
}

TEST(Sampler, PresencePenaltyTakesOffOnceWhateverTheCount) {
  SamplingParams p = greedy();
  p.presence_penalty = 0.3f;
  Sampler sampler(p);
  const std::vector<float> logits{2.0f, 1.8f};
  EXPECT_EQ(sampler.sample(logits, std::vector<TokenId>{0}), 1);  // 1.7 < 1.8
  p.presence_penalty = 0.1f;
  Sampler light(p);
  EXPECT_EQ(light.sample(logits, std::vector<TokenId>{0, 0, 0, 0}), 0);  // 1.9, not 1.6
  // A negative penalty favours what was said.
  p.presence_penalty = -0.5f;
  Sampler favour(p);
  EXPECT_EQ(favour.sample(logits, std::vector<TokenId>{1}), 1);
}

TEST(Sampler, PenaltiesComeAfterTheRepetitionPenaltyAsInLlamaCpp) {
  SamplingParams p = greedy();
  p.repeat_penalty = 2.0f;
  p.presence_penalty = 0.5f;
  Sampler sampler(p);
  // 3.0 / 2 - 0.5 = 1.0 (the other order would give 1.25)
  EXPECT_EQ(sampler.sample(std::vector<float>{3.0f, 1.1f}, std::vector<TokenId>{0}), 1);
  EXPECT_EQ(sampler.sample(std::vector<float>{3.0f, 0.9f}, std::vector<TokenId>{0}), 0);
}

TEST(Sampler, OnlyTheUnmaskedTokenCanComeOut) {
  std::vector<float> logits(100, -kInf);
  logits[42] = -3.0f;
  Sampler sampler(SamplingParams{});
  for (int i = 0; i < 20; ++i) EXPECT_EQ(sampler.sample(logits, {}), 42);
  Sampler argmax(greedy());
  EXPECT_EQ(argmax.sample(logits, {}), 42);
}

TEST(Sampler, RejectsDegenerateInputsWithAClearError) {
  Sampler sampler(SamplingParams{});
  EXPECT_THROW(sampler.sample({}, {}), UsageError);
  EXPECT_THROW(sampler.sample(std::vector<float>{-kInf, -kInf}, {}), UsageError);
  Sampler argmax(greedy());
  EXPECT_THROW(argmax.sample(std::vector<float>{-kInf, -kInf}, {}), UsageError);
  try {
    sampler.sample(std::vector<float>{0.0f, std::nanf(""), 1.0f}, {});
    FAIL() << "a NaN logit was accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("token 1"), std::string::npos) << e.what();
  }
  EXPECT_THROW(argmax.sample(std::vector<float>{0.0f, kInf}, {}), UsageError);
  SamplingParams p = greedy();
  p.repeat_penalty = 1.2f;
  Sampler penalized(p);
  EXPECT_THROW(penalized.sample(std::vector<float>{1, 2}, std::vector<TokenId>{5}), UsageError);
  EXPECT_THROW(penalized.sample(std::vector<float>{1, 2}, std::vector<TokenId>{-1}), UsageError);
}

TEST(Sampler, RejectsOutOfRangeParameters) {
  auto rejects = [](auto change) {
    SamplingParams p;
    change(p);
    EXPECT_THROW(Sampler{p}, UsageError);
  };
  rejects([](SamplingParams& p) { p.temperature = -0.5f; });
  rejects([](SamplingParams& p) { p.temperature = std::nanf(""); });
  rejects([](SamplingParams& p) { p.top_k = -1; });
  rejects([](SamplingParams& p) { p.top_p = 1.5f; });
  rejects([](SamplingParams& p) { p.min_p = -0.1f; });
  rejects([](SamplingParams& p) { p.repeat_penalty = 0.0f; });
  rejects([](SamplingParams& p) { p.repeat_last_n = -2; });
  rejects([](SamplingParams& p) { p.frequency_penalty = 2.5f; });
  rejects([](SamplingParams& p) { p.presence_penalty = -3.0f; });
  rejects([](SamplingParams& p) { p.presence_penalty = std::nanf(""); });
  EXPECT_NO_THROW(Sampler{SamplingParams{}});
}

}  // namespace
}  // namespace kvscope
