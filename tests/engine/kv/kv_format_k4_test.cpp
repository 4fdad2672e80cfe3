// Offset int4, the Int4 K format (kv_format.h): a key is stored as its residual from the
// block's first key, per group with an fp16 scale and minimum. These tests pin the bytes,
// the error bound, the nearly exact first key, the dot product without dequantizing and
// the behaviour on special values.
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "kv/format/kv_format.h"
#include "util/half.h"

namespace kvscope {
namespace {

// Real head dims (8 = stories260K, 40, 64, 72, 80, 96, 128, 256) plus odd ones and ones
// whose groups straddle a byte (head_dim 10: groups of 5).
constexpr std::int64_t kHeadDims[] = {1,  2,  3,  5,  7,  8,  10, 14,  16,  31,  32,
                                      33, 40, 48, 63, 64, 72, 96, 100, 128, 255, 256};

struct StoredKey {
  std::vector<std::uint16_t> offsets;
  std::vector<std::uint8_t> data;
  std::vector<std::uint16_t> scales;
};

StoredKey store(const std::vector<float>& first, const std::vector<float>& x) {
  const auto hd = static_cast<std::int64_t>(x.size());
  StoredKey k{std::vector<std::uint16_t>(x.size()),
              std::vector<std::uint8_t>(
                  static_cast<std::size_t>(kv_data_bytes_per_vector(KvDtype::Int4, hd))),
              std::vector<std::uint16_t>(
                  static_cast<std::size_t>(kv_scales_per_vector(KvSide::K, KvDtype::Int4, hd)))};
  kv_k4_set_offsets(first.data(), hd, k.offsets.data());
  kv_k4_quantize(x.data(), k.offsets.data(), hd, k.data.data(), k.scales.data());
  return k;
}

std::vector<float> load(const StoredKey& k, std::int64_t hd) {
  std::vector<float> out(static_cast<std::size_t>(hd));
  kv_k4_dequantize(k.data.data(), k.scales.data(), k.offsets.data(), hd, out.data());
  return out;
}

// Keys as RoPE leaves them: every channel has its own large offset (+-12), shared by the
// keys of a block, plus a per-key spread of about 1.
struct KeyMaker {
  std::mt19937 rng;
  std::vector<float> channel_offset;

  KeyMaker(unsigned seed, std::int64_t hd) : rng(seed) {
    std::uniform_real_distribution<float> u(-12.0f, 12.0f);
    for (std::int64_t i = 0; i < hd; ++i) channel_offset.push_back(u(rng));
  }
  std::vector<float> key() {
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> x(channel_offset);
    for (float& v : x) v += normal(rng);
    return x;
  }
};

float step_of(const StoredKey& k, std::int64_t i, std::int64_t hd) {
  return fp16_to_float(k.scales[static_cast<std::size_t>(2 * (i / kv_k4_group_size(hd)))]);
}

TEST(KvFormatK4, PacksCodesLowNibbleFirstWithAScaleAndAMinimumPerGroup) {
  // head_dim 4: groups {0, 1} and {2, 3}; offsets (1, 1, 0, 0) are exact in fp16.
  const std::vector<float> first = {1.0f, 1.0f, 0.0f, 0.0f};
  const std::vector<float> x = {1.0f, 8.5f, 3.0f, -1.0f};
  const StoredKey k = store(first, x);
  // group 0: residuals 0, 7.5 -> s = 0.5, m = 0, codes 0, 15
  EXPECT_EQ(k.scales[0], float_to_fp16(0.5f));
  EXPECT_EQ(k.scales[1], float_to_fp16(0.0f));
  // group 1: residuals 3, -1 -> s = fp16(4 / 15), m = -1, codes 15, 0
  EXPECT_EQ(k.scales[2], float_to_fp16(4.0f / 15.0f));
  EXPECT_EQ(k.scales[3], float_to_fp16(-1.0f));
  ASSERT_EQ(k.data.size(), 2u);
  EXPECT_EQ(k.data[0], 0xf0);  // low nibble: element 0, code 0; high: element 1, code 15
  EXPECT_EQ(k.data[1], 0x0f);
  const std::vector<float> y = load(k, 4);
  EXPECT_EQ(y[0], 1.0f);
  EXPECT_EQ(y[1], 8.5f);
  EXPECT_EQ(y[2], -1.0f + fp16_to_float(float_to_fp16(4.0f / 15.0f)) * 15.0f);
  EXPECT_EQ(y[3], -1.0f);
}

TEST(KvFormatK4, RoundTripErrorIsWithinHalfAStepOfTheKeysGroup) {
  for (const std::int64_t hd : kHeadDims) {
    KeyMaker keys(static_cast<unsigned>(hd), hd);
    const std::vector<float> first = keys.key();
    for (int trial = 0; trial < 30; ++trial) {
      const std::vector<float> x = trial == 0 ? first : keys.key();
      const StoredKey k = store(first, x);
      const std::vector<float> y = load(k, hd);
      for (std::int64_t i = 0; i < hd; ++i) {
        const auto ui = static_cast<std::size_t>(i);
        // half a step, plus the fp16 rounding of the minimum (all of the error in a group of
        // one value, where s = 0) and the float rounding of o + m + s * code
        const float m =
            fp16_to_float(k.scales[static_cast<std::size_t>(2 * (i / kv_k4_group_size(hd)) + 1)]);
        const float bound = 0.5f * step_of(k, i, hd) * (1.0f + 1e-3f) + std::fabs(m) * 0x1p-11f +
                            4e-6f * std::fabs(x[ui]);
        ASSERT_LE(std::fabs(x[ui] - y[ui]), bound)
            << "head_dim " << hd << " trial " << trial << " element " << i;
      }
    }
  }
}

TEST(KvFormatK4, TheBlocksFirstKeyIsStoredNearlyExactly) {
  for (const std::int64_t hd : kHeadDims) {
    KeyMaker keys(static_cast<unsigned>(hd) + 100, hd);
    const std::vector<float> first = keys.key();
    const std::vector<float> y = load(store(first, first), hd);
    for (std::int64_t i = 0; i < hd; ++i) {
      const auto ui = static_cast<std::size_t>(i);
      // its residuals are fp16 rounding errors (< 2^-11 relative), cut into 15 steps
      EXPECT_LE(std::fabs(first[ui] - y[ui]), 1e-4f * 12.0f + 4e-6f) << hd << " " << i;
    }
  }
}

TEST(KvFormatK4, KeysWithChannelOffsetsLoseFarLessThanSymmetricInt4) {
  const std::int64_t hd = 128;
  KeyMaker keys(5, hd);
  const std::vector<float> first = keys.key();
  double err_k4 = 0, err_sym = 0;
  std::vector<std::uint8_t> data(64);
  std::vector<std::uint16_t> scales(4);
  for (int trial = 0; trial < 50; ++trial) {
    const std::vector<float> x = keys.key();
    const StoredKey k = store(first, x);
    err_k4 += kv_k4_sq_error(x.data(), k.data.data(), k.scales.data(), k.offsets.data(), hd);
    kv_quantize(KvDtype::Int4, x.data(), hd, data.data(), scales.data());
    err_sym += kv_quant_sq_error(KvDtype::Int4, x.data(), data.data(), scales.data(), hd);
  }
  EXPECT_GT(err_k4, 0.0);
  EXPECT_LT(err_k4 * 10.0, err_sym) << "offset int4 " << err_k4 << " symmetric " << err_sym;
}

TEST(KvFormatK4, DotWithQueryTermsEqualsTheDotOfTheDequantizedKey) {
  std::mt19937 rng(17);
  std::normal_distribution<float> normal(0.0f, 2.0f);
  for (const std::int64_t hd : kHeadDims) {
    KeyMaker keys(static_cast<unsigned>(hd) + 7, hd);
    const std::vector<float> first = keys.key();
    std::vector<float> q(static_cast<std::size_t>(hd));
    for (float& v : q) v = normal(rng);
    std::vector<std::uint16_t> offsets(static_cast<std::size_t>(hd));
    kv_k4_set_offsets(first.data(), hd, offsets.data());
    std::vector<float> terms(static_cast<std::size_t>(kv_k4_query_terms_size(hd)));
    kv_k4_query_terms(q.data(), offsets.data(), hd, terms.data());
    for (int trial = 0; trial < 5; ++trial) {
      const StoredKey k = store(first, keys.key());
      const std::vector<float> y = load(k, hd);
      double ref = 0, mag = 0;
      for (std::size_t i = 0; i < y.size(); ++i) {
        ref += double{q[i]} * y[i];
        mag += std::fabs(double{q[i]} * y[i]);
      }
      EXPECT_NEAR(kv_k4_dot(q.data(), terms.data(), k.data.data(), k.scales.data(), hd), ref,
                  2e-5 * mag + 1e-5)
          << "head_dim " << hd;
    }
  }
}

TEST(KvFormatK4, SqErrorIsTheSumOfSquaredDifferences) {
  KeyMaker keys(9, 72);
  const std::vector<float> first = keys.key();
  const std::vector<float> x = keys.key();
  const StoredKey k = store(first, x);
  const std::vector<float> y = load(k, 72);
  double want = 0;
  for (std::size_t i = 0; i < x.size(); ++i) want += (double{x[i]} - y[i]) * (double{x[i]} - y[i]);
  EXPECT_DOUBLE_EQ(kv_k4_sq_error(x.data(), k.data.data(), k.scales.data(), k.offsets.data(), 72),
                   want);
}

TEST(KvFormatK4, NanInfAndConstantGroupsGiveDeterministicBytes) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> first(8, 2.0f);
  // group 0: every residual NaN -> s = m = 0, codes 0, values = the offsets
  // group 1: a NaN is skipped (code 0), a constant rest has s = 0
  const std::vector<float> x = {nan, nan, nan, nan, 3.0f, nan, 3.0f, 3.0f};
  const StoredKey k = store(first, x);
  EXPECT_EQ(k.scales[0], 0);
  EXPECT_EQ(k.scales[1], 0);
  EXPECT_EQ(k.scales[2], 0);
  EXPECT_EQ(k.scales[3], float_to_fp16(1.0f));
  EXPECT_EQ(k.data, (std::vector<std::uint8_t>{0, 0, 0, 0}));
  EXPECT_EQ(load(k, 8), (std::vector<float>{2, 2, 2, 2, 3, 3, 3, 3}));
  // An infinite residual clamps the scale and the minimum to the largest fp16: finite output.
  const std::vector<float> wide = {-inf, 1.0f, 2.0f, 3.0f, 1e30f, -1e30f, 0.0f, 0.0f};
  const StoredKey w = store(first, wide);
  EXPECT_EQ(w.scales[0], float_to_fp16(65504.0f));
  EXPECT_EQ(w.scales[1], float_to_fp16(-65504.0f));
  for (const float y : load(w, 8)) EXPECT_TRUE(std::isfinite(y));
}

TEST(KvFormatK4, PaddingBytesAreWrittenSoStoredBytesDoNotDependOnOldContents) {
  for (const std::int64_t hd : {std::int64_t{5}, std::int64_t{6}, std::int64_t{7}}) {
    KeyMaker keys(static_cast<unsigned>(hd), hd);
    const std::vector<float> first = keys.key(), x = keys.key();
    std::vector<std::uint16_t> offsets(static_cast<std::size_t>(hd));
    kv_k4_set_offsets(first.data(), hd, offsets.data());
    const auto bytes = static_cast<std::size_t>(kv_data_bytes_per_vector(KvDtype::Int4, hd));
    std::vector<std::uint8_t> a(bytes, 0x00), b(bytes, 0xff);
    std::vector<std::uint16_t> sa(4), sb(4);
    kv_k4_quantize(x.data(), offsets.data(), hd, a.data(), sa.data());
    kv_k4_quantize(x.data(), offsets.data(), hd, b.data(), sb.data());
    EXPECT_EQ(a, b) << "head_dim " << hd;
    EXPECT_EQ(sa, sb) << "head_dim " << hd;
  }
}

}  // namespace
}  // namespace kvscope
