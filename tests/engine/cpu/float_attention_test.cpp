// The float attention kernels (float_attention.h): the exponential's accuracy, the online
// softmax over runs of keys against a direct softmax in double, merging two key ranges, the
// AVX2 functions against the portable ones bit for bit, and the AVX-only ones (no FMA)
// against the exact results.
#include "cpu/attention/float_attention.h"

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cpu/simd_dispatch.h"
#include "util/half.h"

namespace kvscope {
namespace {

std::vector<float> uniform(std::size_t n, unsigned seed, float lo, float hi) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

TEST(FloatAttention, ExpIsWithinTwoUlpOverTheScoresRange) {
  std::vector<float> x = uniform(100000, 1, -87.0f, 0.0f);
  x.insert(x.end(), {0.0f, -1e-8f, -0.5f, -1.0f, -10.0f, -80.0f});
  std::vector<float> y(x.size());
  float_attention_exp(x.data(), y.data(), static_cast<std::int64_t>(x.size()));
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double want = std::exp(static_cast<double>(x[i]));
    const double ulp = want * std::ldexp(1.0, -23);  // float spacing near want, at most
    ASSERT_LE(std::abs(y[i] - want), 2 * ulp) << "e^" << x[i];
  }
  float one = 0.0f;
  const float zero = 0.0f;
  float_attention_exp(&zero, &one, 1);
  EXPECT_EQ(one, 1.0f);  // a rescale by e^0 changes nothing
}

TEST(FloatAttention, ExpBelowTheNormalRangeIsTinyNotWrong) {
  const std::vector<float> x = {-88.0f, -100.0f, -1e30f, -INFINITY};
  std::vector<float> y(x.size());
  float_attention_exp(x.data(), y.data(), static_cast<std::int64_t>(x.size()));
  for (const float v : y) {
    EXPECT_GT(v, 0.0f);
    EXPECT_LT(v, 1.3e-38f);
  }
}

// Softmax attention of n_heads queries over n keys in double. q, k, v: [..][row] padded.
std::vector<double> direct(const std::vector<float>& q, const std::vector<float>& k,
                           const std::vector<float>& v, int n_heads, int n, int hd, int row) {
  std::vector<double> out(static_cast<std::size_t>(n_heads * hd));
  for (int h = 0; h < n_heads; ++h) {
    std::vector<double> s(n);
    double mx = -1e300, sum = 0;
    for (int j = 0; j < n; ++j) {
      double d = 0;
      for (int i = 0; i < hd; ++i) d += double{q[h * row + i]} * k[j * row + i];
      mx = std::max(mx, s[j] = d);
    }
    for (double& x : s) sum += (x = std::exp(x - mx));
    for (int j = 0; j < n; ++j) {
      for (int i = 0; i < hd; ++i) out[h * hd + i] += s[j] / sum * v[j * row + i];
    }
  }
  return out;
}

struct Inputs {
  int n_heads = 3, n = 100, hd = 20;
  int row = static_cast<int>(float_attention_row(20));
  std::vector<float> q, k, v;
  explicit Inputs(int head_dim = 20)
      : hd(head_dim), row(static_cast<int>(float_attention_row(head_dim))) {
    q = uniform(static_cast<std::size_t>(n_heads * row), 2, -2.0f, 2.0f);
    k = uniform(static_cast<std::size_t>(n * row), 3, -2.0f, 2.0f);
    v = uniform(static_cast<std::size_t>(n * row), 4, -1.0f, 1.0f);
    for (auto* m : {&q, &k, &v}) {  // zero padding, as the kernels require
      for (std::size_t r = 0; r < m->size() / row; ++r) {
        for (int i = hd; i < row; ++i) (*m)[r * row + i] = 0.0f;
      }
    }
  }
};

// Feeds keys [from, to) in runs of `run` keys into a fresh state.
FloatAttentionState feed(const Inputs& in, int from, int to, int run) {
  FloatAttentionState st;
  st.reset(in.n_heads, in.row);
  std::vector<float> scores(static_cast<std::size_t>(in.n_heads * float_attention_row(run)));
  for (int j = from; j < to; j += run) {
    const int n = std::min(run, to - j);
    float_attention_keys(in.q.data(), &in.k[j * in.row], &in.v[j * in.row], n, st, scores.data());
  }
  return st;
}

std::vector<float> finish(const Inputs& in, const FloatAttentionState& st) {
  std::vector<float> out(static_cast<std::size_t>(in.n_heads * in.hd));
  float_attention_end(st, in.hd, out.data());
  return out;
}

TEST(FloatAttention, RunsOfKeysAndMergedRangesGiveSoftmaxAttention) {
  const Inputs in;
  const auto want = direct(in.q, in.k, in.v, in.n_heads, in.n, in.hd, in.row);
  for (const int run : {1, 7, 16, 100}) {
    const auto got = finish(in, feed(in, 0, in.n, run));
    for (std::size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-6) << run;
  }
  // keys [0, 37) and [37, 100) attended apart and merged, in either state's favour of max
  FloatAttentionState a = feed(in, 0, 37, 16), b = feed(in, 37, in.n, 16), empty;
  empty.reset(in.n_heads, in.row);
  float_attention_merge(a, empty);  // merging nothing changes nothing
  float_attention_merge(empty, b);  // merging into nothing copies
  float_attention_merge(a, empty);
  const auto got = finish(in, a);
  for (std::size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-6) << i;
}

TEST(FloatAttention, AHeadThatSawNoKeyGivesZeros) {
  FloatAttentionState st;
  st.reset(2, 8);
  std::vector<float> out(16, 5.0f);
  float_attention_end(st, 8, out.data());
  for (const float x : out) EXPECT_EQ(x, 0.0f);
}

void expect_same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  ASSERT_EQ(a.size(), b.size());
  EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0);
}

// head_dim 20 runs the kernels' run-time row length; 64 and 128 their unrolled versions.
TEST(FloatAttention, PortableAndAvx2GiveTheSameBits) {
  if (!cpu_has_avx2_fma_f16c()) GTEST_SKIP() << "this CPU has no AVX2 + FMA + F16C";
  const std::vector<float> x = uniform(1003, 9, -90.0f, 0.0f);
  std::vector<float> e_simd(x.size()), e_port(x.size());
  float_attention_exp(x.data(), e_simd.data(), static_cast<std::int64_t>(x.size()));
  {
    const PortableArithmeticScope portable;
    float_attention_exp(x.data(), e_port.data(), static_cast<std::int64_t>(x.size()));
  }
  expect_same_bits(e_simd, e_port);
  for (const int hd : {20, 64, 128}) {
    SCOPED_TRACE("head_dim " + std::to_string(hd));
    const Inputs in(hd);
    FloatAttentionState simd = feed(in, 0, 50, 13), simd_b = feed(in, 50, in.n, 13);
    float_attention_merge(simd, simd_b);
    const PortableArithmeticScope portable;
    FloatAttentionState port = feed(in, 0, 50, 13), port_b = feed(in, 50, in.n, 13);
    float_attention_merge(port, port_b);
    expect_same_bits(simd.acc, port.acc);
    expect_same_bits(simd.sum, port.sum);
    expect_same_bits(simd.max, port.max);
  }
}

// AVX without AVX2 has no FMA: its functions multiply and add in two roundings, so they are
// checked against the exact results (softmax in double, e^x in double) rather than bit for bit.
TEST(FloatAttention, AvxAloneGivesSoftmaxAttentionAndTheExponential) {
  if (!cpu_has_avx()) GTEST_SKIP() << "this CPU has no AVX";
  const CpuIsaCapScope avx(1);
  ASSERT_TRUE(use_avx() && !use_avx2_fma_f16c());
  const Inputs in;
  const auto want = direct(in.q, in.k, in.v, in.n_heads, in.n, in.hd, in.row);
  for (const int run : {1, 7, 16, 100}) {
    const auto got = finish(in, feed(in, 0, in.n, run));
    for (std::size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-6) << run;
  }
  FloatAttentionState a = feed(in, 0, 37, 16), b = feed(in, 37, in.n, 16);
  float_attention_merge(a, b);
  const auto merged = finish(in, a);
  for (std::size_t i = 0; i < merged.size(); ++i) EXPECT_NEAR(merged[i], want[i], 1e-6) << i;

  const std::vector<float> x = uniform(20000, 13, -87.0f, 0.0f);
  std::vector<float> e(x.size());
  float_attention_exp(x.data(), e.data(), static_cast<std::int64_t>(x.size()));
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double exact = std::exp(static_cast<double>(x[i]));
    EXPECT_NEAR(e[i], exact, 4 * exact * 0x1p-24) << x[i];
  }
}

// The decoded rows attention reads are exactly what the cache format says it stores: any
// head_dim (groups of 32, 20, 18 values; a short last group; more scales than the SIMD code
// converts at once at 256), both sides, every quantized dtype.
TEST(FloatAttention, QuantizedRowsAreTheFormatsValuesBitForBit) {
  // every instruction set (decoding fuses nothing, so AVX alone gives the same bits too)
  for (const int cap : {3, 1, 0}) {
    const CpuIsaCapScope scope(cap);
    SCOPED_TRACE("instruction set level " + std::to_string(cap));
    for (const std::int64_t hd : {8, 36, 40, 64, 72, 128, 256}) {
      const std::int64_t row = float_attention_row(hd);
      const std::vector<float> x = uniform(static_cast<std::size_t>(hd), 11, -3.0f, 3.0f);
      const std::vector<float> first = uniform(static_cast<std::size_t>(hd), 12, -3.0f, 3.0f);
      for (const KvSide side : {KvSide::K, KvSide::V}) {
        for (const KvDtype dtype : {KvDtype::Int8, KvDtype::Int4}) {
          std::vector<std::uint8_t> data(
              static_cast<std::size_t>(kv_data_bytes_per_vector(dtype, hd)));
          std::vector<std::uint16_t> scales(
              static_cast<std::size_t>(kv_scales_per_vector(side, dtype, hd)));
          std::vector<std::uint16_t> offsets16(static_cast<std::size_t>(hd));
          std::vector<float> want(static_cast<std::size_t>(hd));
          const bool k4 = side == KvSide::K && dtype == KvDtype::Int4;
          const std::int64_t width = float_attention_key_terms_width(hd);
          std::vector<float> want_terms(static_cast<std::size_t>(width), 0.0f);
          if (k4) {
            kv_k4_set_offsets(first.data(), hd, offsets16.data());
            kv_k4_quantize(x.data(), offsets16.data(), hd, data.data(), scales.data());
            kv_k4_scaled_codes(data.data(), scales.data(), hd, want.data());
            for (std::size_t k = 0; k < scales.size(); ++k) {
              want_terms[k] = fp16_to_float(scales[k]);
            }
          } else {
            kv_quantize(dtype, x.data(), hd, data.data(), scales.data());
            kv_dequantize(dtype, data.data(), scales.data(), hd, want.data());
          }
          std::vector<float> got(static_cast<std::size_t>(row), 9.0f);
          std::vector<float> terms(static_cast<std::size_t>(width), 9.0f);
          float_attention_rows_from_quantized(side, dtype, data.data(), 0, scales.data(), 0, 1, hd,
                                              row, got.data(), terms.data());
          for (std::int64_t i = hd; i < row; ++i) EXPECT_EQ(got[i], 0.0f) << "padding " << i;
          got.resize(static_cast<std::size_t>(hd));
          SCOPED_TRACE("head_dim " + std::to_string(hd) + (k4 ? " offset int4 K" : ""));
          expect_same_bits(got, want);
          if (k4) expect_same_bits(terms, want_terms);
        }
      }
    }
  }
}

// Rows of a block: vectors at a stride (a slot holds every KV head), each decoded with its own
// scales into its own zero-padded row.
TEST(FloatAttention, QuantizedRowsOfABlockEachGetTheirOwnScales) {
  for (const int cap : {3, 1, 0}) {
    const CpuIsaCapScope scope(cap);
    SCOPED_TRACE("instruction set level " + std::to_string(cap));
    constexpr std::int64_t hd = 64, n = 5;
    const std::int64_t row = float_attention_row(hd);
    const std::vector<float> first = uniform(hd, 21, -2.0f, 2.0f);
    std::vector<std::uint16_t> offsets16(hd);
    kv_k4_set_offsets(first.data(), hd, offsets16.data());
    const std::int64_t width = float_attention_key_terms_width(hd);
    for (const KvSide side : {KvSide::K, KvSide::V}) {
      for (const KvDtype dtype : {KvDtype::Int8, KvDtype::Int4}) {
        const bool k4 = side == KvSide::K && dtype == KvDtype::Int4;
        const std::int64_t data_stride = 3 * kv_data_bytes_per_vector(dtype, hd);
        const std::int64_t scales_stride = 3 * kv_scales_per_vector(side, dtype, hd);
        std::vector<std::uint8_t> data(static_cast<std::size_t>(n * data_stride), 0xa5);
        std::vector<std::uint16_t> scales(static_cast<std::size_t>(n * scales_stride), 0x7bff);
        std::vector<float> want(static_cast<std::size_t>(n * row), 0.0f);
        std::vector<float> want_terms(static_cast<std::size_t>(n * width), 0.0f);
        for (std::int64_t j = 0; j < n; ++j) {
          // vectors of different ranges, so a scale read from the wrong vector shows
          const auto span = static_cast<float>(j + 1);
          const std::vector<float> x = uniform(hd, 30 + static_cast<unsigned>(j), -span, span);
          std::uint8_t* d = &data[j * data_stride];
          std::uint16_t* sc = &scales[j * scales_stride];
          if (k4) {
            kv_k4_quantize(x.data(), offsets16.data(), hd, d, sc);
            kv_k4_scaled_codes(d, sc, hd, &want[j * row]);
            for (std::int64_t k = 0; k < kv_scales_per_vector(side, dtype, hd); ++k) {
              want_terms[j * width + k] = fp16_to_float(sc[k]);
            }
          } else {
            kv_quantize(dtype, x.data(), hd, d, sc);
            kv_dequantize(dtype, d, sc, hd, &want[j * row]);
          }
        }
        std::vector<float> got(static_cast<std::size_t>(n * row), 9.0f);
        std::vector<float> terms(static_cast<std::size_t>(n * width), 0.0f);
        float_attention_rows_from_quantized(side, dtype, data.data(), data_stride, scales.data(),
                                            scales_stride, n, hd, row, got.data(), terms.data());
        SCOPED_TRACE(std::string(k4 ? "offset int4 K" : kv_dtype_name(dtype)));
        expect_same_bits(got, want);
        expect_same_bits(terms, want_terms);
      }
    }
  }
}

// Offset-int4 keys scored from s * code plus their terms (KeyTerms) give the attention of the
// dequantized keys (o + m + s * code) to float rounding, and the AVX2 kernels the portable
// ones' bits: head_dim 8 (stories260K: groups of 4, two groups of scales padded to a lane),
// 40 (a run-time row), 64 and 128 (SmolLM2-size heads: the unrolled kernels); the AVX-only
// kernels to float rounding.
TEST(FloatAttention, OffsetInt4KeysScoreAsTheirDequantizedValues) {
  // two blocks of keys with their own offsets (q . o differs between them)
  constexpr int kHeads = 3, kKeys = 21, kSplit = 11;
  for (const int hd : {8, 40, 64, 128}) {
    SCOPED_TRACE("head_dim " + std::to_string(hd));
    const std::int64_t row = float_attention_row(hd), width = float_attention_key_terms_width(hd);
    const std::int64_t n_scales = kv_scales_per_vector(KvSide::K, KvDtype::Int4, hd);
    const std::int64_t bytes = kv_data_bytes_per_vector(KvDtype::Int4, hd);
    std::vector<std::uint16_t> offsets16(static_cast<std::size_t>(2 * hd));
    std::vector<float> offsets(static_cast<std::size_t>(2 * row), 0.0f);
    for (int b = 0; b < 2; ++b) {
      const std::vector<float> first = uniform(static_cast<std::size_t>(hd), 40 + b, -2.0f, 2.0f);
      kv_k4_set_offsets(first.data(), hd, &offsets16[b * hd]);
      for (int i = 0; i < hd; ++i) offsets[b * row + i] = fp16_to_float(offsets16[b * hd + i]);
    }
    std::vector<std::uint8_t> data(static_cast<std::size_t>(kKeys * bytes));
    std::vector<std::uint16_t> scales(static_cast<std::size_t>(kKeys * n_scales));
    std::vector<float> dequantized(static_cast<std::size_t>(kKeys * row), 0.0f);
    for (int j = 0; j < kKeys; ++j) {
      const int b = j < kSplit ? 0 : 1;
      const std::vector<float> x = uniform(static_cast<std::size_t>(hd), 50 + j, -3.0f, 3.0f);
      kv_k4_quantize(x.data(), &offsets16[b * hd], hd, &data[j * bytes], &scales[j * n_scales]);
      kv_k4_dequantize(&data[j * bytes], &scales[j * n_scales], &offsets[b * row], hd,
                       &dequantized[j * row]);
    }
    std::vector<float> q = uniform(static_cast<std::size_t>(kHeads * row), 60, -0.5f, 0.5f);
    std::vector<float> v = uniform(static_cast<std::size_t>(kKeys * row), 61, -1.0f, 1.0f);
    for (std::int64_t r = 0; r < kHeads * row; r += row) {
      std::fill(q.begin() + r + hd, q.begin() + r + row, 0.0f);
    }
    for (std::int64_t r = 0; r < kKeys * row; r += row) {
      std::fill(v.begin() + r + hd, v.begin() + r + row, 0.0f);
    }
    std::vector<float> query(static_cast<std::size_t>(kHeads * width));
    for (int h = 0; h < kHeads; ++h) {
      float_attention_key_query_terms(&q[h * row], hd, &query[h * width]);
    }
    std::vector<float> scores(static_cast<std::size_t>(kHeads * float_attention_row(kKeys)));
    const auto attend = [&] {  // block by block, as the cache feeds them
      std::vector<float> k(static_cast<std::size_t>(kKeys * row)),
          key(static_cast<std::size_t>(kKeys * width));
      float_attention_rows_from_quantized(KvSide::K, KvDtype::Int4, data.data(), bytes,
                                          scales.data(), n_scales, kKeys, hd, row, k.data(),
                                          key.data());
      FloatAttentionState st;
      st.reset(kHeads, row);
      for (const auto& [from, to] : {std::pair{0, kSplit}, std::pair{kSplit, kKeys}}) {
        const KeyTerms terms{&key[from * width], query.data(), &offsets[from == 0 ? 0 : row],
                             width};
        float_attention_keys(q.data(), &k[from * row], &v[from * row], to - from, st, scores.data(),
                             &terms);
      }
      return st;
    };
    FloatAttentionState plain;
    plain.reset(kHeads, row);
    float_attention_keys(q.data(), dequantized.data(), v.data(), kKeys, plain, scores.data());
    const FloatAttentionState simd = attend();
    std::vector<float> got(static_cast<std::size_t>(kHeads * hd)), want(got.size());
    float_attention_end(simd, hd, got.data());
    float_attention_end(plain, hd, want.data());
    for (std::size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 2e-6f) << i;
    if (cpu_has_avx()) {  // AVX alone (no FMA) multiplies and adds apart: close, not the bits
      const CpuIsaCapScope avx(1);
      std::vector<float> alone(got.size());
      float_attention_end(attend(), hd, alone.data());
      for (std::size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(alone[i], want[i], 2e-6f) << i;
    }
    if (!cpu_has_avx2_fma_f16c()) continue;
    const PortableArithmeticScope portable;
    const FloatAttentionState port = attend();
    expect_same_bits(simd.acc, port.acc);
    expect_same_bits(simd.sum, port.sum);
    expect_same_bits(simd.max, port.max);
  }
}

}  // namespace
}  // namespace kvscope
