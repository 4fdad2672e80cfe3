#include "kv/format/kv_format.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "util/error.h"
#include "util/half.h"

namespace kvscope {
namespace {

constexpr KvDtype kAllDtypes[] = {KvDtype::F16, KvDtype::Int8, KvDtype::Int4};
// Real head dims (8 = stories260K, 40, 72, 80, 96, 128, 256) plus odd and group-boundary ones.
constexpr std::int64_t kHeadDims[] = {1,  2,  3,  5,  7,  8,  16,  31,  32,  33,
                                      40, 48, 64, 72, 80, 96, 100, 128, 255, 256};

struct Stored {
  std::vector<std::uint8_t> data;
  std::vector<std::uint16_t> scales;
};

Stored quantize(KvDtype dtype, const std::vector<float>& x) {
  const auto head_dim = static_cast<std::int64_t>(x.size());
  Stored s{std::vector<std::uint8_t>(
               static_cast<std::size_t>(kv_data_bytes_per_vector(dtype, head_dim))),
           std::vector<std::uint16_t>(
               static_cast<std::size_t>(kv_scales_per_vector(dtype, head_dim)) + 1)};
  kv_quantize(dtype, x.data(), head_dim, s.data.data(), s.scales.data());
  return s;
}

std::vector<float> dequantize(KvDtype dtype, const Stored& s, std::int64_t head_dim) {
  std::vector<float> out(static_cast<std::size_t>(head_dim));
  kv_dequantize(dtype, s.data.data(), s.scales.data(), head_dim, out.data());
  return out;
}

// Gaussian values, by default with a few outliers like real K/V activations.
std::vector<float> random_vector(std::mt19937& rng, std::int64_t head_dim, bool outliers = true) {
  std::normal_distribution<float> normal(0.0f, 1.5f);
  std::uniform_int_distribution<int> pick(0, 15);
  std::vector<float> x(static_cast<std::size_t>(head_dim));
  for (float& v : x) v = outliers && pick(rng) == 0 ? normal(rng) * 8.0f : normal(rng);
  return x;
}

TEST(KvFormat, NamesRoundTripAndLlamaCppAliasesParse) {
  for (const KvDtype d : kAllDtypes) EXPECT_EQ(parse_kv_dtype(kv_dtype_name(d)), d);
  EXPECT_EQ(kv_dtype_name(KvDtype::F16), "f16");
  EXPECT_EQ(kv_dtype_name(KvDtype::Int8), "int8");
  EXPECT_EQ(kv_dtype_name(KvDtype::Int4), "int4");
  EXPECT_EQ(parse_kv_dtype("q8_0"), KvDtype::Int8);
  EXPECT_EQ(parse_kv_dtype("Q4_0"), KvDtype::Int4);
  EXPECT_EQ(parse_kv_dtype("FP16"), KvDtype::F16);
}

TEST(KvFormat, UnknownDtypeNameIsAUsageErrorListingTheChoices) {
  try {
    parse_kv_dtype("int3");
    FAIL() << "expected UsageError";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("'int3'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("f16, int8 or int4"), std::string::npos) << e.what();
  }
  EXPECT_THROW(parse_kv_dtype(""), UsageError);
}

TEST(KvFormat, GroupsAreAtMost32ValuesWithAShorterLastGroup) {
  EXPECT_EQ(kv_group_size(8), 8);
  EXPECT_EQ(kv_group_size(128), 32);
  EXPECT_EQ(kv_scales_per_vector(KvDtype::Int8, 8), 1);
  EXPECT_EQ(kv_scales_per_vector(KvDtype::Int8, 40), 2);  // 32 + 8
  EXPECT_EQ(kv_scales_per_vector(KvDtype::Int4, 72), 3);  // 32 + 32 + 8
  EXPECT_EQ(kv_scales_per_vector(KvDtype::Int4, 128), 4);
  EXPECT_EQ(kv_scales_per_vector(KvDtype::F16, 128), 0);
}

TEST(KvFormat, Int4KeysHaveAtLeastTwoGroupsWithAScaleAndAMinimumEach) {
  EXPECT_EQ(kv_k4_group_size(1), 1);
  EXPECT_EQ(kv_k4_group_size(7), 4);    // 4 + 3
  EXPECT_EQ(kv_k4_group_size(8), 4);    // stories260K: 4 + 4
  EXPECT_EQ(kv_k4_group_size(24), 12);  // 12 + 12
  EXPECT_EQ(kv_k4_group_size(40), 16);  // 16 + 16 + 8
  EXPECT_EQ(kv_k4_group_size(63), 16);  // 16 + 16 + 16 + 15
  EXPECT_EQ(kv_k4_group_size(64), 16);  // SmolLM2: four groups
  EXPECT_EQ(kv_k4_group_size(128), 16);
  EXPECT_EQ(kv_group_size(KvSide::K, KvDtype::Int4, 8), 4);
  EXPECT_EQ(kv_group_size(KvSide::V, KvDtype::Int4, 8), 8);
  EXPECT_EQ(kv_group_size(KvSide::K, KvDtype::Int8, 8), 8);
  EXPECT_EQ(kv_scales_per_vector(KvSide::K, KvDtype::Int4, 8), 4);    // 2 groups x (s, m)
  EXPECT_EQ(kv_scales_per_vector(KvSide::K, KvDtype::Int4, 72), 10);  // 4 x 16 + 8
  EXPECT_EQ(kv_scales_per_vector(KvSide::K, KvDtype::Int4, 128), 16);
  EXPECT_EQ(kv_scales_per_vector(KvSide::V, KvDtype::Int4, 128), 4);
  EXPECT_EQ(kv_scales_per_vector(KvSide::K, KvDtype::Int8, 128), 4);
  EXPECT_EQ(kv_bytes_per_vector(KvSide::K, KvDtype::Int4, 128), 64 + 32);
  EXPECT_EQ(kv_bytes_per_vector(KvSide::V, KvDtype::Int4, 128), 64 + 8);
  EXPECT_EQ(kv_k4_query_terms_size(8), 3);  // q . o and two group sums
}

TEST(KvFormat, BytesPerBlockPerLayerHasExactValues) {
  // fp16, 32 KV heads, head_dim 128, blocks of 16: K + V = 16 x 2 x 32 x 128 x 2.
  EXPECT_EQ(kv_bytes_per_block_per_layer(KvDtype::F16, KvDtype::F16, 32, 128, 16), 262144);
  // int8: (128 data + 4 scales x 2) per vector.
  EXPECT_EQ(kv_bytes_per_block_per_layer(KvDtype::Int8, KvDtype::Int8, 32, 128, 16),
            16 * 2 * 32 * (128 + 8));
  // int4: K (64 data + 8 groups x (s, m) x 2) + V (64 data + 4 scales x 2) per slot, and
  // the K offsets 128 x 2 once per block: 184 B per token and KV head.
  EXPECT_EQ(kv_bytes_per_block_per_layer(KvDtype::Int4, KvDtype::Int4, 32, 128, 16),
            16 * 32 * ((64 + 32) + (64 + 8)) + 32 * 128 * 2);
  EXPECT_EQ(kv_bytes_per_block_per_layer(KvDtype::Int4, KvDtype::Int4, 32, 128, 16), 16 * 32 * 184);
  // stories260K: 4 KV heads, head_dim 8; int4 is 19 B per token and KV head.
  EXPECT_EQ(kv_bytes_per_block_per_layer(KvDtype::F16, KvDtype::F16, 4, 8, 16), 16 * 2 * 4 * 16);
  EXPECT_EQ(kv_bytes_per_block_per_layer(KvDtype::Int8, KvDtype::Int8, 4, 8, 16),
            16 * 2 * 4 * (8 + 2));
  EXPECT_EQ(kv_bytes_per_block_per_layer(KvDtype::Int4, KvDtype::Int4, 4, 8, 16),
            16 * 4 * ((4 + 8) + (4 + 2)) + 4 * 8 * 2);
  EXPECT_EQ(kv_bytes_per_block_per_layer(KvDtype::Int4, KvDtype::Int4, 4, 8, 16), 16 * 4 * 19);
  // head_dim 40: symmetric groups 32 + 8, int4 K groups 16 + 16 + 8.
  EXPECT_EQ(kv_bytes_per_block_per_layer(KvDtype::Int8, KvDtype::Int8, 8, 40, 16),
            16 * 2 * 8 * (40 + 4));
  EXPECT_EQ(kv_bytes_per_block_per_layer(KvDtype::Int4, KvDtype::Int4, 8, 40, 16),
            16 * 8 * ((20 + 12) + (20 + 4)) + 8 * 40 * 2);
  // K and V may differ; the offsets come with int4 K only.
  EXPECT_EQ(kv_bytes_per_block_per_layer(KvDtype::F16, KvDtype::Int4, 8, 128, 16),
            16 * 8 * (256 + 64 + 8));
  EXPECT_EQ(kv_bytes_per_block_per_layer(KvDtype::Int4, KvDtype::F16, 8, 128, 16),
            16 * 8 * (64 + 32 + 256) + 8 * 128 * 2);
  // The two parts the function adds up.
  EXPECT_EQ(kv_slot_bytes_per_layer(KvDtype::Int4, KvDtype::Int4, 4, 8), 4 * 18);
  EXPECT_EQ(kv_block_offset_bytes_per_layer(KvDtype::Int4, 4, 8), 64);
  EXPECT_EQ(kv_block_offset_bytes_per_layer(KvDtype::Int8, 4, 8), 0);
}

TEST(KvFormat, BytesPerTokenIsTheBlockFigureOverTheBlockSize) {
  EXPECT_EQ(kv_bytes_per_token_per_layer(KvDtype::F16, 32, 128), 16384.0);
  EXPECT_EQ(kv_bytes_per_token_per_layer(KvDtype::Int4, 4, 8), 76.0);  // blocks of 16
  // offsets 64 B shared by 3 slots: 72 + 64 / 3
  EXPECT_DOUBLE_EQ(kv_bytes_per_token_per_layer(KvDtype::Int4, KvDtype::Int4, 4, 8, 3),
                   72.0 + 64.0 / 3.0);
  EXPECT_EQ(kv_bytes_per_token_per_layer(KvDtype::Int8, KvDtype::Int4, 8, 128, 5),
            8.0 * (136 + 72));
}

TEST(KvFormat, OddHeadDimsPadDataToAnEvenByteCount) {
  EXPECT_EQ(kv_data_bytes_per_vector(KvDtype::Int8, 7), 8);
  EXPECT_EQ(kv_data_bytes_per_vector(KvDtype::Int4, 7), 4);  // 4 bytes of nibbles
  EXPECT_EQ(kv_data_bytes_per_vector(KvDtype::Int4, 6), 4);  // 3 bytes, padded
  EXPECT_EQ(kv_data_bytes_per_vector(KvDtype::Int4, 1), 2);
  for (const KvDtype d : kAllDtypes) {
    for (std::int64_t hd = 1; hd <= 300; ++hd) {
      EXPECT_EQ(kv_data_bytes_per_vector(d, hd) % 2, 0) << kv_dtype_name(d) << " " << hd;
    }
  }
}

TEST(KvFormat, BytesFunctionRejectsNonPositiveShapes) {
  const auto bytes = [](KvDtype d, std::int64_t heads, std::int64_t hd, std::int64_t bs) {
    return kv_bytes_per_block_per_layer(d, d, heads, hd, bs);
  };
  EXPECT_THROW(bytes(KvDtype::F16, 0, 128, 16), UsageError);
  EXPECT_THROW(bytes(KvDtype::F16, 8, 0, 16), UsageError);
  EXPECT_THROW(bytes(KvDtype::Int8, -1, 64, 16), UsageError);
  EXPECT_THROW(bytes(KvDtype::Int8, 8, std::int64_t{1} << 40, 16), UsageError);
  EXPECT_THROW(bytes(KvDtype::Int4, 8, 64, 0), UsageError);
  EXPECT_THROW(bytes(KvDtype::Int4, 8, 64, std::int64_t{1} << 40), UsageError);
  EXPECT_THROW(kv_block_offset_bytes_per_layer(KvDtype::Int4, 0, 8), UsageError);
  EXPECT_THROW(kv_bytes_per_token_per_layer(KvDtype::Int4, 8, 64, 0), UsageError);
}

TEST(KvFormat, Int8StoresRoundedMultiplesOfTheGroupScale) {
  std::vector<float> x(8, 0.0f);
  x[0] = 127.0f;  // max|x| = 127 -> s = 1
  x[1] = -63.5f;  // rounds half away from zero -> -64
  x[2] = 0.4f;
  x[3] = -127.0f;
  const Stored s = quantize(KvDtype::Int8, x);
  EXPECT_EQ(fp16_to_float(s.scales[0]), 1.0f);
  EXPECT_EQ(static_cast<std::int8_t>(s.data[0]), 127);
  EXPECT_EQ(static_cast<std::int8_t>(s.data[1]), -64);
  EXPECT_EQ(static_cast<std::int8_t>(s.data[2]), 0);
  EXPECT_EQ(static_cast<std::int8_t>(s.data[3]), -127);
  const std::vector<float> y = dequantize(KvDtype::Int8, s, 8);
  EXPECT_EQ(y[0], 127.0f);
  EXPECT_EQ(y[1], -64.0f);
}

TEST(KvFormat, Int4PacksTwoValuesPerByteLowNibbleFirst) {
  const std::vector<float> x = {7.0f, -7.0f, 3.5f, 0.0f, -1.0f, 2.0f, 0.0f, 0.0f};
  const Stored s = quantize(KvDtype::Int4, x);  // s = 7 / 7 = 1
  EXPECT_EQ(fp16_to_float(s.scales[0]), 1.0f);
  ASSERT_EQ(s.data.size(), 4u);
  EXPECT_EQ(s.data[0], 0x1f);  // low: 7 + 8 = 15, high: -7 + 8 = 1
  EXPECT_EQ(s.data[1], 0x8c);  // low: 4 + 8 (3.5 rounds away from zero), high: 0 + 8
  EXPECT_EQ(s.data[2], 0xa7);  // low: -1 + 8, high: 2 + 8
  const std::vector<float> y = dequantize(KvDtype::Int4, s, 8);
  EXPECT_EQ(y, (std::vector<float>{7, -7, 4, 0, -1, 2, 0, 0}));
}

TEST(KvFormat, RoundTripErrorIsWithinHalfAStepForEveryDtypeAndHeadDim) {
  std::mt19937 rng(1234);
  for (const KvDtype dtype : kAllDtypes) {
    for (const std::int64_t hd : kHeadDims) {
      for (int trial = 0; trial < 20; ++trial) {
        const std::vector<float> x = random_vector(rng, hd);
        const Stored s = quantize(dtype, x);
        const std::vector<float> y = dequantize(dtype, s, hd);
        for (std::int64_t i = 0; i < hd; ++i) {
          const auto ui = static_cast<std::size_t>(i);
          // F16: round to nearest, relative 2^-11 (plus the subnormal step).
          // Int: half the fp16 group scale, plus float rounding of s * q.
          const float bound =
              dtype == KvDtype::F16
                  ? std::fabs(x[ui]) * 0x1p-11f + 0x1p-25f
                  : 0.5f *
                            fp16_to_float(
                                s.scales[static_cast<std::size_t>(i / kv_group_size(hd))]) *
                            (1.0f + 1e-5f) +
                        1e-6f;
          ASSERT_LE(std::fabs(x[ui] - y[ui]), bound)
              << kv_dtype_name(dtype) << " head_dim " << hd << " element " << i;
        }
      }
    }
  }
}

TEST(KvFormat, RelativeRmsErrorOnGaussianDataMatchesTheBitWidth) {
  std::mt19937 rng(7);
  const double expected_max[] = {1e-3, 0.01, 0.15};  // f16, int8, int4
  for (std::size_t d = 0; d < 3; ++d) {
    double err = 0, ref = 0;
    for (int trial = 0; trial < 200; ++trial) {
      const std::vector<float> x = random_vector(rng, 128, /*outliers=*/false);
      const Stored s = quantize(kAllDtypes[d], x);
      err += kv_quant_sq_error(kAllDtypes[d], x.data(), s.data.data(), s.scales.data(), 128);
      for (const float v : x) ref += double{v} * v;
    }
    EXPECT_LT(std::sqrt(err / ref), expected_max[d]) << kv_dtype_name(kAllDtypes[d]);
    EXPECT_GT(err, 0.0) << kv_dtype_name(kAllDtypes[d]);
  }
}

TEST(KvFormat, ZeroTinyHugeAndNanInputsGiveFiniteDeterministicOutput) {
  for (const KvDtype dtype : {KvDtype::Int8, KvDtype::Int4}) {
    const std::vector<float> zeros(40, 0.0f);
    EXPECT_EQ(dequantize(dtype, quantize(dtype, zeros), 40), zeros);
    // max|x| / 127 underflows fp16: the group quantizes to exactly 0, not NaN.
    const std::vector<float> tiny(8, 1e-12f);
    EXPECT_EQ(dequantize(dtype, quantize(dtype, tiny), 8), std::vector<float>(8, 0.0f));
    // A scale past fp16 range is clamped: output is finite.
    std::vector<float> huge(8, 1.0f);
    huge[3] = 1e12f;
    huge[4] = std::numeric_limits<float>::quiet_NaN();
    for (const float y : dequantize(dtype, quantize(dtype, huge), 8)) EXPECT_TRUE(std::isfinite(y));
  }
}

TEST(KvFormat, PaddingBytesAreWrittenSoStoredBytesDoNotDependOnOldContents) {
  for (const KvDtype dtype : kAllDtypes) {
    for (const std::int64_t hd : {std::int64_t{5}, std::int64_t{6}, std::int64_t{7}}) {
      std::mt19937 rng(static_cast<unsigned>(hd));
      const std::vector<float> x = random_vector(rng, hd);
      const auto bytes = static_cast<std::size_t>(kv_data_bytes_per_vector(dtype, hd));
      std::vector<std::uint8_t> a(bytes, 0x00), b(bytes, 0xff);
      std::vector<std::uint16_t> sa(4), sb(4);
      kv_quantize(dtype, x.data(), hd, a.data(), sa.data());
      kv_quantize(dtype, x.data(), hd, b.data(), sb.data());
      EXPECT_EQ(a, b) << kv_dtype_name(dtype) << " head_dim " << hd;
    }
  }
}

TEST(KvFormat, DotAndAxpyEqualTheDequantizedReference) {
  std::mt19937 rng(99);
  for (const KvDtype dtype : kAllDtypes) {
    for (const std::int64_t hd : kHeadDims) {
      const std::vector<float> x = random_vector(rng, hd);
      const std::vector<float> q = random_vector(rng, hd);
      const Stored s = quantize(dtype, x);
      const std::vector<float> y = dequantize(dtype, s, hd);
      double ref = 0, mag = 0;
      for (std::size_t i = 0; i < y.size(); ++i) {
        ref += double{q[i]} * y[i];
        mag += std::fabs(double{q[i]} * y[i]);
      }
      EXPECT_NEAR(kv_dot(dtype, q.data(), s.data.data(), s.scales.data(), hd), ref,
                  1e-5 * mag + 1e-6)
          << kv_dtype_name(dtype) << " head_dim " << hd;

      std::vector<float> out(q), want(q);
      kv_axpy(dtype, 0.75f, s.data.data(), s.scales.data(), hd, out.data());
      for (std::size_t i = 0; i < want.size(); ++i) want[i] += 0.75f * y[i];
      for (std::size_t i = 0; i < want.size(); ++i) {
        ASSERT_NEAR(out[i], want[i], 1e-5f * (std::fabs(want[i]) + 1.0f)) << i;
      }
    }
  }
}

TEST(KvFormat, QuantSqErrorIsTheSumOfSquaredDifferences) {
  std::mt19937 rng(5);
  for (const KvDtype dtype : kAllDtypes) {
    const std::vector<float> x = random_vector(rng, 72);
    const Stored s = quantize(dtype, x);
    const std::vector<float> y = dequantize(dtype, s, 72);
    double want = 0;
    for (std::size_t i = 0; i < x.size(); ++i)
      want += (double{x[i]} - y[i]) * (double{x[i]} - y[i]);
    EXPECT_DOUBLE_EQ(kv_quant_sq_error(dtype, x.data(), s.data.data(), s.scales.data(), 72), want);
  }
}

}  // namespace
}  // namespace kvscope
