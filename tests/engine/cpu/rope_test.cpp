#include "cpu/rope.h"

#include <cmath>
#include <cstdint>
#include <numbers>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "util/error.h"

namespace kvscope {
namespace {

RopeConfig plain_config(std::int64_t head_dim, RopePairing pairing, double theta = 10000.0) {
  RopeConfig c;
  c.head_dim = head_dim;
  c.rope_dim = head_dim;
  c.theta = theta;
  c.pairing = pairing;
  return c;
}

std::vector<float> random_heads(std::size_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

// The llama GGUF converter's permutation of Q/K rows, per head of d rows: GGUF row 2k + j
// holds HF row j * d/2 + k (it interleaves the two halves).
std::vector<float> permute_like_converter(const std::vector<float>& hf, std::int64_t head_dim) {
  std::vector<float> out(hf.size());
  const std::int64_t half = head_dim / 2;
  for (std::size_t h = 0; h < hf.size() / static_cast<std::size_t>(head_dim); ++h) {
    const auto base = h * static_cast<std::size_t>(head_dim);
    for (std::int64_t k = 0; k < half; ++k) {
      for (std::int64_t j = 0; j < 2; ++j) {
        out[base + static_cast<std::size_t>(2 * k + j)] =
            hf[base + static_cast<std::size_t>(j * half + k)];
      }
    }
  }
  return out;
}

double dot(const std::vector<float>& a, const std::vector<float>& b) {
  double s = 0;
  for (std::size_t i = 0; i < a.size(); ++i) s += static_cast<double>(a[i]) * b[i];
  return s;
}

TEST(Rope, FrequenciesFollowThetaToTheMinusTwoIOverD) {
  const Rope rope(plain_config(64, RopePairing::Adjacent, 10000.0));
  ASSERT_EQ(rope.freqs().size(), 32u);
  for (std::size_t i = 0; i < 32; ++i) {
    EXPECT_DOUBLE_EQ(rope.freqs()[i], std::pow(10000.0, -2.0 * static_cast<double>(i) / 64.0));
  }
  EXPECT_DOUBLE_EQ(rope.freqs()[16], 0.01);  // 10000^(-1/2)
  EXPECT_EQ(rope.magnitude(), 1.0);
}

TEST(Rope, PositionZeroIsTheIdentity) {
  for (const auto pairing : {RopePairing::Adjacent, RopePairing::HalfSplit}) {
    const Rope rope(plain_config(16, pairing));
    auto x = random_heads(3 * 16, 1);
    const auto before = x;
    rope.apply(x, 0);
    EXPECT_EQ(x, before);
  }
}

TEST(Rope, AdjacentRotatesNeighbouringPairsByHandComputedAngles) {
  // head_dim 4, theta 10000: pair 0 turns 1 rad per position, pair 1 0.01 rad.
  const Rope rope(plain_config(4, RopePairing::Adjacent));
  std::vector<float> x{1, 0, 0, 1};
  rope.apply(x, 3);
  EXPECT_NEAR(x[0], std::cos(3.0), 1e-7);
  EXPECT_NEAR(x[1], std::sin(3.0), 1e-7);
  EXPECT_NEAR(x[2], -std::sin(0.03), 1e-7);
  EXPECT_NEAR(x[3], std::cos(0.03), 1e-7);
}

TEST(Rope, HalfSplitRotatesEachDimAgainstTheOneHalfAHeadAway) {
  const Rope rope(plain_config(4, RopePairing::HalfSplit));
  std::vector<float> x{1, 0, 0, 1};  // pair 0 = (x0, x2) = (1, 0); pair 1 = (x1, x3) = (0, 1)
  rope.apply(x, 3);
  EXPECT_NEAR(x[0], std::cos(3.0), 1e-7);
  EXPECT_NEAR(x[2], std::sin(3.0), 1e-7);
  EXPECT_NEAR(x[1], -std::sin(0.03), 1e-7);
  EXPECT_NEAR(x[3], std::cos(0.03), 1e-7);
}

TEST(Rope, AdjacentOnConverterPermutedHeadsEqualsPermutedHalfSplit) {
  // The property that makes a llama GGUF and its HF original compute the same model.
  const std::int64_t head_dim = 16;
  const Rope adjacent(plain_config(head_dim, RopePairing::Adjacent));
  const Rope half_split(plain_config(head_dim, RopePairing::HalfSplit));
  for (const std::int64_t pos : {1, 7, 100, 4095}) {
    auto hf = random_heads(4 * head_dim, static_cast<std::uint32_t>(pos));
    auto gguf = permute_like_converter(hf, head_dim);
    half_split.apply(hf, pos);
    adjacent.apply(gguf, pos);
    EXPECT_EQ(gguf, permute_like_converter(hf, head_dim)) << "position " << pos;
  }
}

TEST(Rope, AttentionScoresAgreeBetweenPairingsAndDependOnlyOnDistance) {
  const std::int64_t d = 32;
  const Rope adjacent(plain_config(d, RopePairing::Adjacent));
  const Rope half_split(plain_config(d, RopePairing::HalfSplit));
  const auto q = random_heads(d, 11);
  const auto k = random_heads(d, 12);
  auto score = [&](const Rope& rope, std::vector<float> qv, std::vector<float> kv, std::int64_t qp,
                   std::int64_t kp) {
    rope.apply(qv, qp);
    rope.apply(kv, kp);
    return dot(qv, kv);
  };
  const double hf = score(half_split, q, k, 50, 45);
  EXPECT_NEAR(score(adjacent, permute_like_converter(q, d), permute_like_converter(k, d), 50, 45),
              hf, 1e-5);
  EXPECT_NEAR(score(half_split, q, k, 1005, 1000), hf, 1e-4);  // relative position only
  EXPECT_GT(std::abs(score(half_split, q, k, 50, 40) - hf), 1e-3);
}

TEST(Rope, RotationKeepsTheVectorLength) {
  const Rope rope(plain_config(64, RopePairing::Adjacent));
  auto x = random_heads(64, 21);
  const double before = dot(x, x);
  rope.apply(x, 12345);
  EXPECT_NEAR(dot(x, x), before, 1e-5);
}

TEST(Rope, PartialRotaryLeavesDimsPastRopeDimUntouched) {
  for (const auto pairing : {RopePairing::Adjacent, RopePairing::HalfSplit}) {
    RopeConfig c = plain_config(16, pairing);
    c.rope_dim = 8;
    const Rope rope(c);
    auto x = random_heads(2 * 16, 31);
    const auto before = x;
    rope.apply(x, 9);
    for (std::size_t h = 0; h < 2; ++h) {
      for (std::size_t i = 8; i < 16; ++i) EXPECT_EQ(x[h * 16 + i], before[h * 16 + i]);
      EXPECT_NE(x[h * 16], before[h * 16]);
    }
  }
}

TEST(Rope, LinearScalingDividesThePosition) {
  RopeConfig c = plain_config(32, RopePairing::HalfSplit);
  const Rope plain(c);
  c.scaling.type = RopeScalingType::Linear;
  c.scaling.factor = 4.0;
  const Rope linear(c);
  auto a = random_heads(32, 41);
  auto b = a;
  linear.apply(a, 40);
  plain.apply(b, 10);
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-6);
}

TEST(Rope, Llama3ScalingMatchesHandComputedFrequencies) {
  // Llama 3.1: theta 500000, factor 8, low 1, high 4, original context 8192, d 128.
  RopeConfig c = plain_config(128, RopePairing::HalfSplit, 500000.0);
  c.scaling = {RopeScalingType::Llama3, 8.0, 8192, 1.0, 4.0};
  const Rope rope(c);
  const auto f = rope.freqs();
  EXPECT_DOUBLE_EQ(f[0], 1.0);                             // wavelength 6.3: kept
  EXPECT_NEAR(f[20], 0.016560440080994446, 1e-15);         // 379 < 2048: kept
  EXPECT_NEAR(f[30], 0.0013718935677611381, 1e-15);        // 2948: smoothed
  EXPECT_NEAR(f[33], 0.00031269375038406517, 1e-15);       // 5454: smoothed
  EXPECT_NEAR(f[63], 2.455140791131609e-06 / 8.0, 1e-18);  // > 8192: divided by 8
}

TEST(Rope, DynamicNtkRaisesThetaOnlyPastTheOriginalContext) {
  RopeConfig c = plain_config(64, RopePairing::HalfSplit);
  c.scaling = {RopeScalingType::Dynamic, 2.0, 4096, 1.0, 4.0};
  c.context_length = 4096;
  EXPECT_DOUBLE_EQ(Rope(c).freqs()[1], std::pow(10000.0, -2.0 / 64.0));
  c.context_length = 8192;  // theta' = 10000 * (2 * 2 - 1)^(64/62) = 31082.24
  const Rope scaled(c);
  EXPECT_NEAR(scaled.freqs()[1], std::pow(31082.236667168814, -2.0 / 64.0), 1e-12);
  EXPECT_DOUBLE_EQ(scaled.freqs()[0], 1.0);
}

TEST(Rope, YarnBlendsInterpolationAndExtrapolationLikeGgml) {
  // d 64, theta 10000, factor 4, original 4096: correction dims 10 .. 23.
  RopeConfig c = plain_config(64, RopePairing::HalfSplit);
  c.scaling = {RopeScalingType::Yarn, 4.0, 4096, 1.0, 4.0};
  const Rope rope(c);
  const auto f = rope.freqs();
  EXPECT_DOUBLE_EQ(f[5], std::pow(10000.0, -10.0 / 64.0));  // below 10: extrapolated
  EXPECT_NEAR(f[15], 0.009488517882700576, 1e-15);          // ramp 5/13
  EXPECT_NEAR(f[20], 0.0013378867023789297, 1e-15);         // ramp 10/13
  EXPECT_NEAR(f[31], 0.0001333521432163324 / 4.0, 1e-18);   // past 23: interpolated
  EXPECT_NEAR(rope.magnitude(), 1.138629436111989, 1e-12);  // 1 + 0.1 ln 4
  std::vector<float> x{1, 0, 0, 0};
  RopeConfig small = c;
  small.head_dim = small.rope_dim = 4;
  Rope(small).apply(x, 0);
  EXPECT_NEAR(x[0], 1.138629436111989, 1e-6);  // cos and sin carry the magnitude
}

TEST(Rope, FreqFactorsDivideTheFrequencies) {
  RopeConfig c = plain_config(8, RopePairing::Adjacent);
  c.freq_factors = {1.0f, 2.0f, 4.0f, 8.0f};
  const Rope rope(c);
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_DOUBLE_EQ(rope.freqs()[i],
                     std::pow(10000.0, -2.0 * static_cast<double>(i) / 8.0) / c.freq_factors[i]);
  }
}

TEST(Rope, AnglesServeRotateTheSameAsApply) {
  const Rope rope(plain_config(8, RopePairing::HalfSplit));
  std::vector<float> cos(4), sin(4);
  rope.angles(77, cos, sin);
  auto a = random_heads(3 * 8, 51);
  auto b = a;
  rope.rotate(a, cos, sin);
  rope.apply(b, 77);
  EXPECT_EQ(a, b);
  EXPECT_NEAR(cos[0], std::cos(77.0), 1e-6);
}

TEST(Rope, RejectsBadConfigsAndBuffers) {
  RopeConfig odd = plain_config(8, RopePairing::Adjacent);
  odd.rope_dim = 7;
  EXPECT_THROW(Rope{odd}, ModelError);
  RopeConfig wide = plain_config(8, RopePairing::Adjacent);
  wide.rope_dim = 10;
  EXPECT_THROW(Rope{wide}, ModelError);
  RopeConfig no_orig = plain_config(8, RopePairing::Adjacent);
  no_orig.scaling = {RopeScalingType::Llama3, 8.0, 0, 1.0, 4.0};
  EXPECT_THROW(Rope{no_orig}, ModelError);
  RopeConfig zero_factor = plain_config(8, RopePairing::Adjacent);
  zero_factor.scaling.type = RopeScalingType::Linear;
  zero_factor.scaling.factor = 0.0;
  EXPECT_THROW(Rope{zero_factor}, ModelError);

  const Rope rope(plain_config(8, RopePairing::Adjacent));
  std::vector<float> not_whole(12);
  EXPECT_THROW(rope.apply(not_whole, 1), UsageError);
  std::vector<float> head(8);
  EXPECT_THROW(rope.apply(head, -1), UsageError);
}

TEST(Rope, ConfigFromSpecTakesTheModelsFields) {
  ModelSpec spec;
  spec.head_dim = 64;
  spec.rope_dim = 0;  // unset: the whole head rotates
  spec.rope_theta = 1e6;
  spec.rope_pairing = RopePairing::HalfSplit;
  spec.context_length = 4096;
  spec.rope_scaling.type = RopeScalingType::Dynamic;
  spec.rope_scaling.factor = 2.0;
  const RopeConfig c = rope_config(spec, 8192);
  EXPECT_EQ(c.rope_dim, 64);
  EXPECT_EQ(c.theta, 1e6);
  EXPECT_EQ(c.pairing, RopePairing::HalfSplit);
  EXPECT_EQ(c.context_length, 8192);
  EXPECT_EQ(c.scaling.original_context, 4096);  // dynamic: the model's own context
  EXPECT_NO_THROW(Rope{c});
}

}  // namespace
}  // namespace kvscope
