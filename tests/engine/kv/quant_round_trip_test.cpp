#include "kv/format/quant_round_trip.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "kv/format/kv_rotation.h"
#include "kv/format/synthetic_kv.h"
#include "util/error.h"

namespace kvscope {
namespace {

constexpr KvDtype kAllDtypes[] = {KvDtype::F16, KvDtype::Int8, KvDtype::Int4};
constexpr KvSide kSides[] = {KvSide::K, KvSide::V};

SyntheticKv synthetic(std::int64_t head_dim, std::int64_t n_outliers, float scale = 10.0f) {
  SyntheticKvSpec spec;
  spec.n_vectors = 512;
  spec.head_dim = head_dim;
  spec.n_outlier_channels = n_outliers;
  spec.outlier_scale = scale;
  return make_synthetic_kv(spec);
}

// The decoder's own measure, vector by vector: what write_token adds to a layer's sums.
// Int4 vectors arrive in the Hadamard basis (the decoder turns them, kv_rotation.h); int4
// keys are offset int4, the first key of every block of `block` setting the offsets.
double decoder_sq_error(KvSide side, KvDtype dtype, const SyntheticKv& kv, std::int64_t block) {
  std::vector<std::uint8_t> data(
      static_cast<std::size_t>(kv_data_bytes_per_vector(dtype, kv.head_dim)));
  std::vector<std::uint16_t> scales(
      static_cast<std::size_t>(kv_scales_per_vector(side, dtype, kv.head_dim)) + 1);
  std::vector<std::uint16_t> offsets(static_cast<std::size_t>(kv.head_dim));
  std::vector<float> turned(static_cast<std::size_t>(kv.head_dim));
  double sum = 0;
  for (std::int64_t v = 0; v < kv.n_vectors; ++v) {
    const float* x = kv.values.data() + v * kv.head_dim;
    if (kv_rotated(side, dtype)) {
      std::copy(x, x + kv.head_dim, turned.begin());
      kv_rotate_rows(turned.data(), 1, kv.head_dim);
      x = turned.data();
    }
    if (side == KvSide::K && dtype == KvDtype::Int4) {
      if (v % block == 0) kv_k4_set_offsets(x, kv.head_dim, offsets.data());
      kv_k4_quantize(x, offsets.data(), kv.head_dim, data.data(), scales.data());
      sum += kv_k4_sq_error(x, data.data(), scales.data(), offsets.data(), kv.head_dim);
    } else {
      kv_quantize(dtype, x, kv.head_dim, data.data(), scales.data());
      sum += kv_quant_sq_error(dtype, x, data.data(), scales.data(), kv.head_dim);
    }
  }
  return sum;
}

TEST(QuantRoundTrip, TotalErrorIsTheDecodersMeasureAndPerChannelSumsAddUpToIt) {
  for (const std::int64_t head_dim : {8, 33, 40, 128}) {
    const SyntheticKv kv = synthetic(head_dim, 2);
    double sq_exact = 0;
    for (const float x : kv.values) sq_exact += static_cast<double>(x) * x;
    for (const KvSide side : kSides) {
      for (const KvDtype dtype : kAllDtypes) {
        for (const std::int64_t block : {16, 7}) {
          const QuantRoundTrip r = kv_quant_round_trip(side, dtype, kv.values, head_dim, block);
          ASSERT_EQ(r.per_channel.size(), static_cast<std::size_t>(head_dim));
          EXPECT_EQ(r.n_vectors, 512);
          EXPECT_EQ(r.total.count, 512 * head_dim);
          // the same sum; int4's is taken in the other basis, equal up to float rounding
          const double expected = decoder_sq_error(side, dtype, kv, block);
          const double tolerance = kv_rotated(side, dtype) ? 1e-4 : 1e-9;
          EXPECT_NEAR(r.total.sq_error, expected, tolerance * expected + 1e-12)
              << kv_dtype_name(dtype) << (side == KvSide::K ? " K" : " V") << " head_dim "
              << head_dim << " block " << block;
          EXPECT_NEAR(r.total.sq_exact, sq_exact, 1e-9 * sq_exact);
          for (const QuantErrorSums& c : r.per_channel) EXPECT_EQ(c.count, 512);
        }
      }
    }
  }
}

TEST(QuantRoundTrip, BytesPerVectorIncludeTheInt4KeysShareOfTheBlockOffsets) {
  for (const KvDtype dtype : kAllDtypes) {
    const SyntheticKv kv = synthetic(40, 0);
    EXPECT_EQ(kv_quant_round_trip(KvSide::V, dtype, kv.values, 40).bytes_per_vector,
              static_cast<double>(kv_bytes_per_vector(KvSide::V, dtype, 40)));
  }
  const SyntheticKv kv = synthetic(128, 0);
  const QuantRoundTrip k4 = kv_quant_round_trip(KvSide::K, KvDtype::Int4, kv.values, 128, 16);
  EXPECT_EQ(
      k4.bytes_per_vector,
      static_cast<double>(kv_bytes_per_vector(KvSide::K, KvDtype::Int4, 128)) + 128.0 * 2.0 / 16.0);
  // K and V of one token and head, as the cache stores them, is the engine's per-token size.
  const double v4 = kv_quant_round_trip(KvSide::V, KvDtype::Int4, kv.values, 128).bytes_per_vector;
  EXPECT_DOUBLE_EQ(k4.bytes_per_vector + v4, kv_bytes_per_token_per_layer(KvDtype::Int4, 1, 128));
}

TEST(QuantRoundTrip, FewerBitsGiveMoreError) {
  const SyntheticKv kv = synthetic(128, 0);
  for (const KvSide side : kSides) {
    auto rel = [&](KvDtype d) {
      return kv_quant_round_trip(side, d, kv.values, 128).total.relative_rms_error();
    };
    EXPECT_GT(rel(KvDtype::F16), 0.0);
    EXPECT_LT(rel(KvDtype::F16), 1e-3);  // fp16 keeps 11 significant bits
    EXPECT_LT(rel(KvDtype::F16), rel(KvDtype::Int8));
    EXPECT_LT(rel(KvDtype::Int8), rel(KvDtype::Int4));
  }
}

// With head_dim 128 (groups of 32) and outliers in channels 32 and 96, groups 1 and 3
// get an outlier's range: their ordinary channels lose far more precision than those of
// the clean groups 0 and 2, while the outlier channels themselves stay accurate. (Int8,
// stored in the model's channels; int4 below.)
TEST(QuantRoundTrip, AnOutlierCoarsensEveryChannelOfItsGroupOnly) {
  const SyntheticKv kv = synthetic(128, 2, 20.0f);
  ASSERT_EQ(kv.outlier_channels, (std::vector<std::int64_t>{32, 96}));
  for (const KvSide side : kSides) {
    for (const KvDtype dtype : {KvDtype::Int8}) {
      const QuantRoundTrip r = kv_quant_round_trip(side, dtype, kv.values, 128);
      auto rel = [&](std::int64_t c) {
        return r.per_channel[static_cast<std::size_t>(c)].relative_rms_error();
      };
      for (const std::int64_t clean : {5, 70}) {
        for (const std::int64_t hit : {40, 100}) {
          EXPECT_GT(rel(hit), 3.0 * rel(clean))
              << kv_dtype_name(dtype) << (side == KvSide::K ? " K " : " V ") << hit << " vs "
              << clean;
        }
      }
      EXPECT_LT(rel(32), rel(40)) << kv_dtype_name(dtype);
    }
  }
}

// Int4 lives in the Hadamard basis, where the two outliers are spread over all 128
// channels: no group of the model's channels is coarsened more than another, and the total
// error is far below what int4 loses storing the same vectors in the model's channels.
TEST(QuantRoundTrip, Int4SpreadsTheOutliersErrorOverEveryChannel) {
  const SyntheticKv kv = synthetic(128, 2, 20.0f);
  for (const KvSide side : kSides) {
    const QuantRoundTrip r = kv_quant_round_trip(side, KvDtype::Int4, kv.values, 128);
    auto rms = [&](std::int64_t c) {
      const QuantErrorSums& s = r.per_channel[static_cast<std::size_t>(c)];
      return std::sqrt(s.sq_error / static_cast<double>(s.count));
    };
    for (const std::int64_t clean : {5, 70}) {
      for (const std::int64_t hit : {32, 40, 100}) {
        EXPECT_LT(rms(hit), 1.5 * rms(clean)) << (side == KvSide::K ? "K " : "V ") << hit;
        EXPECT_GT(rms(hit), rms(clean) / 1.5) << (side == KvSide::K ? "K " : "V ") << hit;
      }
    }
    // the same values through int4 without the rotation (V: the symmetric format)
    if (side == KvSide::V) {
      std::vector<std::uint8_t> data(
          static_cast<std::size_t>(kv_data_bytes_per_vector(KvDtype::Int4, 128)));
      std::vector<std::uint16_t> scales(
          static_cast<std::size_t>(kv_scales_per_vector(KvDtype::Int4, 128)));
      double unturned = 0;
      for (std::int64_t v = 0; v < kv.n_vectors; ++v) {
        const float* x = kv.values.data() + v * 128;
        kv_quantize(KvDtype::Int4, x, 128, data.data(), scales.data());
        unturned += kv_quant_sq_error(KvDtype::Int4, x, data.data(), scales.data(), 128);
      }
      EXPECT_LT(r.total.sq_error, 0.6 * unturned);
    }
  }
}

TEST(QuantRoundTrip, ValuesThatAreNotWholeVectorsAreAUsageError) {
  const std::vector<float> values(10, 1.0f);
  EXPECT_THROW(kv_quant_round_trip(KvSide::V, KvDtype::Int8, values, 4), UsageError);
  EXPECT_THROW(kv_quant_round_trip(KvSide::V, KvDtype::Int8, values, 0), UsageError);
  EXPECT_THROW(kv_quant_round_trip(KvSide::K, KvDtype::Int4, values, 5, 0), UsageError);
  EXPECT_THROW(kv_quant_round_trip(KvSide::K, KvDtype::Int8, std::span<const float>(), 4),
               UsageError);
  EXPECT_EQ(kv_quant_round_trip(KvSide::K, KvDtype::Int4, values, 5).n_vectors, 2);
}

}  // namespace
}  // namespace kvscope
