// The SSE2 writers of the KV cache (kv/format/kv_quantize_sse2.h) against the scalar ones,
// byte for byte: the CUDA append kernel is held to the scalar bytes, so the SIMD path must
// not move a bit. Random vectors at many scales (subnormal fp16 scales, clamped ones, codes
// on exact halves), zero residuals of both signs in either order (the one case a SIMD
// minimum could decide differently), every special fp16 conversion, and the inputs the SSE2
// code leaves to the scalar one (NaN, inf, shapes).
#include "kv/format/kv_quantize_sse2.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "util/half.h"

namespace kvscope {
namespace {

constexpr bool kSse2 =
#if defined(__SSE2__)
    true;
#else
    false;
#endif

// n values: normal draws times a scale picked per group of 8, with some exact halves of a
// code step and some zeros.
std::vector<float> draws(std::int64_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const float scales[] = {1.0f, 3e-3f, 1e-7f, 2e-9f, 40.0f, 5e3f, 0.5f};
  std::vector<float> x(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    const float scale = scales[(i / 8 + seed) % std::size(scales)];
    x[static_cast<std::size_t>(i)] = normal(rng) * scale;
    if (rng() % 11 == 0) x[static_cast<std::size_t>(i)] = static_cast<float>(rng() % 15) * 0.5f;
    if (rng() % 13 == 0) x[static_cast<std::size_t>(i)] = (rng() % 2) ? 0.0f : -0.0f;
  }
  return x;
}

void expect_same(const std::vector<std::uint8_t>& a, const std::vector<std::uint8_t>& b,
                 const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (std::size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(a[i], b[i]) << what << ": byte " << i;
  }
}

// kv_quantize (SSE2 where it takes the input) against kv_quantize_portable: data and scales.
void check_symmetric(KvDtype dtype, const std::vector<float>& x, const std::string& what) {
  const auto hd = static_cast<std::int64_t>(x.size());
  const auto data_bytes = static_cast<std::size_t>(kv_data_bytes_per_vector(dtype, hd));
  const auto n_scales = static_cast<std::size_t>(kv_scales_per_vector(dtype, hd));
  std::vector<std::uint8_t> fast(data_bytes + 2 * n_scales, 0xa5), slow(fast.size(), 0x5a);
  auto* fast_scales = reinterpret_cast<std::uint16_t*>(fast.data() + data_bytes);
  auto* slow_scales = reinterpret_cast<std::uint16_t*>(slow.data() + data_bytes);
  kv_quantize(dtype, x.data(), hd, fast.data(), fast_scales);
  kv_quantize_portable(dtype, x.data(), hd, slow.data(), slow_scales);
  expect_same(fast, slow, what);
}

TEST(KvQuantizeSse2, SymmetricInt8AndInt4WriteTheScalarBytes) {
  for (const KvDtype dtype : {KvDtype::Int8, KvDtype::Int4, KvDtype::F16}) {
    for (const std::int64_t hd : {32, 64, 96, 128, 256, 40, 8}) {
      for (std::uint32_t seed = 0; seed < 60; ++seed) {
        const std::vector<float> x = draws(hd, seed);
        check_symmetric(dtype, x,
                        std::string(kv_dtype_name(dtype)) + " head_dim " + std::to_string(hd) +
                            " seed " + std::to_string(seed));
      }
    }
  }
}

TEST(KvQuantizeSse2, TheSse2PathTakesRealShapesAndLeavesTheRestToTheScalarCode) {
  std::vector<std::uint8_t> data(512);
  std::vector<std::uint16_t> scales(32);
  std::vector<float> x = draws(64, 1);
  EXPECT_EQ(kv_sse2::quantize_symmetric(KvDtype::Int4, x.data(), 64, data.data(), scales.data()),
            kSse2);
  EXPECT_FALSE(kv_sse2::quantize_symmetric(KvDtype::Int8, x.data(), 40, data.data(),
                                           scales.data()));  // groups of 32 do not divide 40
  x[17] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_FALSE(
      kv_sse2::quantize_symmetric(KvDtype::Int8, x.data(), 64, data.data(), scales.data()));
  check_symmetric(KvDtype::Int8, x, "a NaN (scalar rules)");
  x[17] = -std::numeric_limits<float>::infinity();
  EXPECT_FALSE(
      kv_sse2::quantize_symmetric(KvDtype::Int4, x.data(), 64, data.data(), scales.data()));
  check_symmetric(KvDtype::Int4, x, "an inf (scalar rules)");
}

// Every branch of float_to_fp16: NaN of either sign and any payload, inf, overflow and the
// largest finite, the boundary between subnormal and normal results, subnormal ties to even,
// values below half the smallest subnormal, signed zeros.
TEST(KvQuantizeSse2, Fp16StoresAreFloatToFp16BitForBit) {
  std::vector<float> x = {std::numeric_limits<float>::quiet_NaN(),
                          -std::numeric_limits<float>::quiet_NaN(),
                          std::bit_cast<float>(0x7f800001u),
                          std::bit_cast<float>(0xffc12345u),
                          std::numeric_limits<float>::infinity(),
                          -std::numeric_limits<float>::infinity(),
                          65504.0f,
                          65519.996f,
                          65520.0f,
                          -1e30f,
                          6.103515625e-05f,
                          6.1035152e-05f,
                          std::ldexp(1.0f, -25),
                          std::ldexp(3.0f, -25),
                          std::ldexp(5.0f, -25),
                          std::ldexp(1.0f, -26),
                          std::ldexp(1.5f, -25),
                          0.0f,
                          -0.0f,
                          1.0f / 3.0f,
                          -2.0009765625f,
                          1.00048828125f,
                          1.00146484375f,
                          3e-8f};
  for (int i = 0; i < 4000; ++i) {
    x.push_back(std::bit_cast<float>(0x33000000u + static_cast<std::uint32_t>(i) * 0x3b1f1u));
  }
  while (x.size() % 4 != 0) x.push_back(1.0f);
  std::vector<std::uint8_t> out(2 * x.size());
  ASSERT_EQ(kv_sse2::store_f16(x.data(), static_cast<std::int64_t>(x.size()), out.data()), kSse2);
  if (!kSse2) GTEST_SKIP() << "no SSE2 in this build";
  for (std::size_t i = 0; i < x.size(); ++i) {
    std::uint16_t h = 0;
    std::memcpy(&h, out.data() + 2 * i, 2);
    ASSERT_EQ(h, float_to_fp16(x[i])) << "x[" << i << "] = " << x[i] << " (bits 0x" << std::hex
                                      << std::bit_cast<std::uint32_t>(x[i]) << ")";
  }
  EXPECT_FALSE(kv_sse2::store_f16(x.data(), 6, out.data()));  // not a multiple of 4
}

// kv_k4_quantize (SSE2 where it takes the input) against kv_k4_quantize_portable.
void check_k4(const std::vector<float>& x, const std::vector<std::uint16_t>& offsets,
              const std::string& what) {
  const auto hd = static_cast<std::int64_t>(x.size());
  const auto data_bytes = static_cast<std::size_t>(kv_data_bytes_per_vector(KvDtype::Int4, hd));
  const auto n_scales =
      static_cast<std::size_t>(kv_scales_per_vector(KvSide::K, KvDtype::Int4, hd));
  std::vector<std::uint8_t> fast(data_bytes + 2 * n_scales, 0xa5), slow(fast.size(), 0x5a);
  kv_k4_quantize(x.data(), offsets.data(), hd, fast.data(),
                 reinterpret_cast<std::uint16_t*>(fast.data() + data_bytes));
  kv_k4_quantize_portable(x.data(), offsets.data(), hd, slow.data(),
                          reinterpret_cast<std::uint16_t*>(slow.data() + data_bytes));
  expect_same(fast, slow, what);
}

std::vector<std::uint16_t> offsets_of(const std::vector<float>& x) {
  std::vector<std::uint16_t> o(x.size());
  kv_k4_set_offsets(x.data(), static_cast<std::int64_t>(x.size()), o.data());
  for (std::size_t i = 0; i < x.size(); ++i) EXPECT_EQ(o[i], float_to_fp16(x[i]));
  return o;
}

TEST(KvQuantizeSse2, OffsetInt4KeysWriteTheScalarBytes) {
  for (const std::int64_t hd : {32, 64, 80, 128, 256, 40, 16, 8}) {
    for (std::uint32_t seed = 0; seed < 60; ++seed) {
      const std::vector<float> first = draws(hd, 1000 + seed), key = draws(hd, seed);
      const std::vector<std::uint16_t> o = offsets_of(first);
      const std::string what = "head_dim " + std::to_string(hd) + " seed " + std::to_string(seed);
      check_k4(key, o, what);
      check_k4(first, o, what + " (the block's first key)");
      if (hd % 16 == 0 && hd >= 32) {  // and the SSE2 code wrote them
        std::vector<std::uint8_t> data(static_cast<std::size_t>(hd));
        std::vector<std::uint16_t> scales(static_cast<std::size_t>(hd));
        EXPECT_EQ(kv_sse2::k4_quantize(key.data(), o.data(), hd, data.data(), scales.data()), kSse2)
            << what;
      }
    }
  }
}

// Zero residuals of both signs: the scalar scan keeps the first of equal minima (or maxima),
// and +0 and -0 store different fp16 bits for m. Groups whose range ends at zero, with +0
// and -0 in either order and at every lane.
TEST(KvQuantizeSse2, SignedZeroResidualsEndTheRangeAsTheScalarScanSays) {
  const std::int64_t hd = 64;
  const std::vector<std::uint16_t> zero_offsets(static_cast<std::size_t>(hd), 0);
  for (int first = 0; first < 16; ++first) {
    for (int second = 0; second < 16; ++second) {
      for (const float sign : {1.0f, -1.0f}) {
        std::vector<float> x(static_cast<std::size_t>(hd));
        for (std::int64_t i = 0; i < hd; ++i) {
          x[static_cast<std::size_t>(i)] = sign * (0.25f + 0.01f * static_cast<float>(i % 16));
        }
        for (std::int64_t g = 0; g < hd / 16; ++g) {
          x[static_cast<std::size_t>(g * 16 + first)] = (g % 2) ? -0.0f : 0.0f;
          if (second != first)
            x[static_cast<std::size_t>(g * 16 + second)] = (g % 2) ? 0.0f : -0.0f;
        }
        check_k4(x, zero_offsets,
                 "zeros at " + std::to_string(first) + ", " + std::to_string(second) +
                     (sign > 0 ? " (range starts at 0)" : " (range ends at 0)"));
      }
    }
  }
}

TEST(KvQuantizeSse2, KeysWithANonFiniteValueOrOffsetAreLeftToTheScalarCode) {
  std::vector<float> x = draws(64, 7), first(64);
  for (std::size_t i = 0; i < first.size(); ++i) first[i] = std::sin(static_cast<float>(i));
  std::vector<std::uint16_t> o = offsets_of(first);
  std::vector<std::uint8_t> data(64);
  std::vector<std::uint16_t> scales(16);
  EXPECT_EQ(kv_sse2::k4_quantize(x.data(), o.data(), 64, data.data(), scales.data()), kSse2);
  x[40] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_FALSE(kv_sse2::k4_quantize(x.data(), o.data(), 64, data.data(), scales.data()));
  check_k4(x, o, "a NaN key value");
  x[40] = 1.0f;
  o[3] = 0x7c00;  // an offset of +inf (a first key beyond fp16's range)
  EXPECT_FALSE(kv_sse2::k4_quantize(x.data(), o.data(), 64, data.data(), scales.data()));
  check_k4(x, o, "an inf offset");
}

// The read side of the error measurement: the SSE2 decoders give the scalar decoders'
// floats bit for bit, so the measured error is the same sum.
TEST(KvQuantizeSse2, TheErrorMeasurementDecodesTheScalarValues) {
  for (const KvDtype dtype : {KvDtype::F16, KvDtype::Int8, KvDtype::Int4}) {
    for (const std::int64_t hd : {32, 64, 128, 256}) {
      for (std::uint32_t seed = 0; seed < 20; ++seed) {
        const std::vector<float> x = draws(hd, seed);
        std::vector<std::uint8_t> data(static_cast<std::size_t>(2 * hd));
        std::vector<std::uint16_t> scales(static_cast<std::size_t>(hd));
        kv_quantize(dtype, x.data(), hd, data.data(), scales.data());
        std::vector<float> fast(x.size()), slow(x.size());
        ASSERT_EQ(kv_sse2::dequantize(dtype, data.data(), scales.data(), hd, fast.data()), kSse2);
        kv_dequantize(dtype, data.data(), scales.data(), hd, slow.data());
        if (kSse2) {
          ASSERT_EQ(std::memcmp(fast.data(), slow.data(), 4 * x.size()), 0)
              << kv_dtype_name(dtype) << " head_dim " << hd << " seed " << seed;
        }
        EXPECT_EQ(kv_quant_sq_error(dtype, x.data(), data.data(), scales.data(), hd),
                  kv_sq_error_of(x.data(), slow.data(), hd));
      }
    }
  }
  for (const std::int64_t hd : {32, 64, 128, 256}) {
    for (std::uint32_t seed = 0; seed < 20; ++seed) {
      const std::vector<float> x = draws(hd, seed);
      const std::vector<std::uint16_t> o = offsets_of(draws(hd, seed + 99));
      std::vector<std::uint8_t> data(static_cast<std::size_t>(hd));
      std::vector<std::uint16_t> scales(static_cast<std::size_t>(hd));
      kv_k4_quantize(x.data(), o.data(), hd, data.data(), scales.data());
      std::vector<float> fast(x.size()), slow(x.size());
      const bool taken =
          kv_sse2::k4_dequantize(data.data(), scales.data(), o.data(), hd, fast.data());
      kv_k4_dequantize(data.data(), scales.data(), o.data(), hd, slow.data());
      if (taken) {
        ASSERT_EQ(std::memcmp(fast.data(), slow.data(), 4 * x.size()), 0)
            << "int4 K head_dim " << hd << " seed " << seed;
      }
      EXPECT_EQ(kv_k4_sq_error(x.data(), data.data(), scales.data(), o.data(), hd),
                kv_sq_error_of(x.data(), slow.data(), hd));
    }
  }
  // an fp16 value that is inf is left to the scalar decoder
  std::vector<std::uint8_t> inf_half(64, 0);
  inf_half[7] = 0x7c;  // element 3: 0x7c00
  std::vector<float> out(32);
  EXPECT_FALSE(kv_sse2::dequantize(KvDtype::F16, inf_half.data(), nullptr, 32, out.data()));
}

}  // namespace
}  // namespace kvscope
