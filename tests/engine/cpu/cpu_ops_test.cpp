#include "cpu/cpu_ops.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "cpu/thread_pool.h"
#include "quant/tensor_type.h"
#include "util/error.h"
#include "util/half.h"

namespace kvscope {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

std::vector<float> random_floats(std::size_t n, std::uint32_t seed, float scale = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-scale, scale);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

WeightView f32_view(const std::vector<float>& data, std::int64_t rows, std::int64_t cols) {
  return WeightView{"test.weight", TensorType::F32, rows, cols, data.data()};
}

// llm.c's comparison: |got - want| <= abs + rel * |want|, reporting the first mismatch.
void expect_close(const std::vector<float>& got, const std::vector<double>& want, double abs,
                  double rel) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    ASSERT_NEAR(got[i], want[i], abs + rel * std::abs(want[i])) << "at index " << i;
  }
}

// y[t][r] = sum_c w[r][c] x[t][c] in double.
std::vector<double> reference_matvec(const std::vector<float>& w, const std::vector<float>& x,
                                     std::int64_t rows, std::int64_t cols) {
  const std::int64_t n_tokens = static_cast<std::int64_t>(x.size()) / cols;
  std::vector<double> y(static_cast<std::size_t>(n_tokens * rows));
  for (std::int64_t t = 0; t < n_tokens; ++t) {
    for (std::int64_t r = 0; r < rows; ++r) {
      double sum = 0.0;
      for (std::int64_t c = 0; c < cols; ++c) {
        sum += static_cast<double>(w[static_cast<std::size_t>(r * cols + c)]) *
               x[static_cast<std::size_t>(t * cols + c)];
      }
      y[static_cast<std::size_t>(t * rows + r)] = sum;
    }
  }
  return y;
}

TEST(CpuOps, RmsnormOfAKnownVector) {
  // mean of squares of {1,2,3,4} is 7.5: out = x / sqrt(7.5) * w
  const std::vector<float> x{1, 2, 3, 4};
  const std::vector<float> w{1, 1, 2, 0.5f};
  std::vector<float> out(4);
  rmsnorm(x, w, 0.0f, out);
  const double inv = 1.0 / std::sqrt(7.5);
  expect_close(out, {1 * inv, 2 * inv, 6 * inv, 2 * inv}, 0, 2e-7);
}

TEST(CpuOps, RmsnormMatchesDoubleFormulaOnEveryRow) {
  const std::int64_t n = 37;
  const auto x = random_floats(3 * n, 1, 5.0f);
  const auto w = random_floats(n, 2);
  const float eps = 1e-5f;
  std::vector<float> out(x.size());
  rmsnorm(x, w, eps, out);
  std::vector<double> want(x.size());
  for (std::int64_t r = 0; r < 3; ++r) {
    double ss = 0;
    for (std::int64_t i = 0; i < n; ++i) ss += std::pow(x[static_cast<std::size_t>(r * n + i)], 2);
    const double scale = 1.0 / std::sqrt(ss / n + eps);
    for (std::int64_t i = 0; i < n; ++i) {
      const auto k = static_cast<std::size_t>(r * n + i);
      want[k] = x[k] * scale * w[static_cast<std::size_t>(i)];
    }
  }
  expect_close(out, want, 1e-7, 1e-6);
}

TEST(CpuOps, RmsnormOfZerosIsZerosThanksToEps) {
  const std::vector<float> x(8, 0.0f);
  const std::vector<float> w(8, 1.0f);
  std::vector<float> out(8, 1.0f);
  rmsnorm(x, w, 1e-6f, out);
  for (const float v : out) EXPECT_EQ(v, 0.0f);
}

TEST(CpuOps, RmsnormWorksInPlace) {
  auto x = random_floats(16, 3);
  const auto w = random_floats(16, 4);
  std::vector<float> separate(16);
  rmsnorm(x, w, 1e-5f, separate);
  rmsnorm(x, w, 1e-5f, x);
  EXPECT_EQ(x, separate);
}

TEST(CpuOps, RmsnormReadsF16AndBf16WeightsLikeF32) {
  const std::int64_t n = 24;
  const auto x = random_floats(2 * n, 5);
  // Weights exactly representable in fp16 and bf16, so all three must agree bit for bit.
  std::vector<float> w(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i)
    w[static_cast<std::size_t>(i)] = 0.5f + 0.125f * static_cast<float>(i % 8);
  std::vector<std::uint16_t> h(w.size());
  std::vector<std::uint16_t> b(w.size());
  for (std::size_t i = 0; i < w.size(); ++i) {
    h[i] = float_to_fp16(w[i]);
    b[i] = float_to_bf16(w[i]);
  }
  std::vector<float> want(x.size());
  std::vector<float> got(x.size());
  rmsnorm(x, w, 1e-5f, want);
  rmsnorm(x, f32_view(w, 1, n), 1e-5f, got);
  EXPECT_EQ(got, want);
  rmsnorm(x, WeightView{"n.f16", TensorType::F16, n, 1, h.data()}, 1e-5f, got);
  EXPECT_EQ(got, want);
  rmsnorm(x, WeightView{"n.bf16", TensorType::BF16, 1, n, b.data()}, 1e-5f, got);
  EXPECT_EQ(got, want);
}

TEST(CpuOps, RmsnormRejectsMismatchedShapesAndQuantizedWeights) {
  const std::vector<float> x(32);
  const std::vector<float> w(4);
  std::vector<float> out(32);
  EXPECT_THROW(
      rmsnorm(std::span<const float>(x).first(10), w, 1e-5f, std::span<float>(out).first(10)),
      UsageError);  // 10 is not whole rows of 4
  EXPECT_THROW(rmsnorm(x, w, 1e-5f, std::span<float>(out).first(4)), UsageError);
  const std::vector<std::uint8_t> q(34);  // one Q8_0 block: a norm weight may not be quantized
  EXPECT_THROW(rmsnorm(x, WeightView{"n.q8", TensorType::Q8_0, 1, 32, q.data()}, 1e-5f, out),
               UsageError);
  EXPECT_THROW(rmsnorm(x, f32_view(w, 1, 4), 1e-5f, std::span<float>(out).first(8)), UsageError);
}

TEST(CpuOps, MatvecMatchesNaiveProductForEveryThreadCountAndBatch) {
  const std::int64_t rows = 37;
  const std::int64_t cols = 19;
  const auto w = random_floats(static_cast<std::size_t>(rows * cols), 7);
  for (const std::int64_t n_tokens : {1, 5}) {
    const auto x = random_floats(static_cast<std::size_t>(n_tokens * cols), 8);
    const auto want = reference_matvec(w, x, rows, cols);
    std::vector<float> first;
    for (const int threads : {1, 2, 3, 4}) {
      ThreadPool pool(threads);
      std::vector<float> y(static_cast<std::size_t>(n_tokens * rows));
      matvec(pool, f32_view(w, rows, cols), x, y);
      expect_close(y, want, 1e-6, 1e-5);
      if (first.empty()) first = y;
      EXPECT_EQ(y, first) << "threads " << threads << " changed the result";
    }
  }
}

TEST(CpuOps, MatvecSplitsLargeMatricesAcrossThreads) {
  // Large enough (300 x 256 x 3 tokens) that every thread gets rows.
  const std::int64_t rows = 300;
  const std::int64_t cols = 256;
  const auto w = random_floats(static_cast<std::size_t>(rows * cols), 9);
  const auto x = random_floats(static_cast<std::size_t>(3 * cols), 10);
  ThreadPool pool(3);
  std::vector<float> y(static_cast<std::size_t>(3 * rows));
  matvec(pool, f32_view(w, rows, cols), x, y);
  expect_close(y, reference_matvec(w, x, rows, cols), 1e-5, 1e-5);
}

TEST(CpuOps, MatvecBatchEqualsOneTokenAtATime) {
  const std::int64_t rows = 29;
  const std::int64_t cols = 64;
  const std::int64_t n_tokens = 7;
  const auto w = random_floats(static_cast<std::size_t>(rows * cols), 11);
  const auto x = random_floats(static_cast<std::size_t>(n_tokens * cols), 12);
  ThreadPool pool(2);
  std::vector<float> batch(static_cast<std::size_t>(n_tokens * rows));
  matvec(pool, f32_view(w, rows, cols), x, batch);
  for (std::int64_t t = 0; t < n_tokens; ++t) {
    std::vector<float> one(static_cast<std::size_t>(rows));
    matvec(pool, f32_view(w, rows, cols),
           std::span<const float>(x).subspan(static_cast<std::size_t>(t * cols),
                                             static_cast<std::size_t>(cols)),
           one);
    for (std::int64_t r = 0; r < rows; ++r) {
      ASSERT_EQ(batch[static_cast<std::size_t>(t * rows + r)], one[static_cast<std::size_t>(r)])
          << "token " << t << " row " << r;
    }
  }
}

TEST(CpuOps, MatvecOnQ8_0RowsMatchesTheDequantizedProduct) {
  const std::int64_t rows = 11;
  const std::int64_t cols = 96;  // three Q8_0 blocks per row
  const auto w = random_floats(static_cast<std::size_t>(rows * cols), 13);
  const auto stride = static_cast<std::size_t>(row_bytes(TensorType::Q8_0, cols));
  std::vector<std::uint8_t> q(stride * static_cast<std::size_t>(rows));
  std::vector<float> dequantized(w.size());
  for (std::int64_t r = 0; r < rows; ++r) {
    const auto off = static_cast<std::size_t>(r * cols);
    quantize_row(TensorType::Q8_0, w.data() + off, q.data() + static_cast<std::size_t>(r) * stride,
                 cols);
    dequantize_row(TensorType::Q8_0, q.data() + static_cast<std::size_t>(r) * stride,
                   dequantized.data() + off, cols);
  }
  const auto x = random_floats(static_cast<std::size_t>(2 * cols), 14);
  ThreadPool pool(2);
  std::vector<float> y(static_cast<std::size_t>(2 * rows));
  matvec(pool, WeightView{"w.q8_0", TensorType::Q8_0, rows, cols, q.data()}, x, y);
  expect_close(y, reference_matvec(dequantized, x, rows, cols), 1e-5, 1e-5);
  // and quantization error stays small against the unquantized weights
  expect_close(y, reference_matvec(w, x, rows, cols), 0.05, 0.0);
}

TEST(CpuOps, MatvecRejectsShapesThatDisagree) {
  const std::vector<float> w(6 * 4);
  ThreadPool pool(1);
  std::vector<float> y(6);
  const std::vector<float> x_bad(5);
  EXPECT_THROW(matvec(pool, f32_view(w, 6, 4), x_bad, y), UsageError);
  const std::vector<float> x(8);  // two tokens, but y holds one
  EXPECT_THROW(matvec(pool, f32_view(w, 6, 4), x, y), UsageError);
  EXPECT_THROW(matvec(pool, WeightView{"missing", TensorType::F32, 6, 4, nullptr}, x, y),
               UsageError);
  const std::vector<std::uint8_t> q(34 * 6);
  EXPECT_THROW(matvec(pool, WeightView{"w.q8", TensorType::Q8_0, 6, 20, q.data()}, x, y),
               UsageError);
}

TEST(CpuOps, AddBiasAddsToEveryToken) {
  std::vector<float> y{1, 2, 3, 10, 20, 30};
  const std::vector<float> bias{0.5f, -1, 2};
  add_bias(y, bias);
  EXPECT_EQ(y, (std::vector<float>{1.5f, 1, 5, 10.5f, 19, 32}));
  add_bias(y, f32_view(bias, 1, 3));
  EXPECT_EQ(y, (std::vector<float>{2, 0, 7, 11, 18, 34}));
  std::vector<float> odd(4);
  EXPECT_THROW(add_bias(odd, bias), UsageError);
}

TEST(CpuOps, SiluKnownValuesAndExtremes) {
  EXPECT_EQ(silu(0.0f), 0.0f);
  EXPECT_NEAR(silu(1.0f), 0.7310585786f, 1e-7);
  EXPECT_NEAR(silu(-2.0f), -0.2384058440f, 1e-7);
  EXPECT_EQ(silu(100.0f), 100.0f);
  const float very_negative = silu(-200.0f);  // e^200 overflows to inf: the result is -0
  EXPECT_FALSE(std::isnan(very_negative));
  EXPECT_EQ(very_negative, 0.0f);
}

TEST(CpuOps, SwigluIsSiluOfGateTimesUpAndMayWriteOverGate) {
  auto gate = random_floats(33, 15, 4.0f);
  const auto up = random_floats(33, 16, 4.0f);
  std::vector<float> out(33);
  swiglu(gate, up, out);
  for (std::size_t i = 0; i < gate.size(); ++i) {
    const double g = gate[i];
    ASSERT_NEAR(out[i], g / (1.0 + std::exp(-g)) * up[i], 1e-6 * (1 + std::abs(out[i])));
  }
  swiglu(gate, up, gate);
  EXPECT_EQ(gate, out);
  EXPECT_THROW(swiglu(gate, std::span<const float>(up).first(3), out), UsageError);
}

TEST(CpuOps, AddInPlaceIsTheResidualSum) {
  std::vector<float> x{1, 2, 3};
  add_in_place(x, std::vector<float>{0.5f, 0.25f, -3});
  EXPECT_EQ(x, (std::vector<float>{1.5f, 2.25f, 0}));
  EXPECT_THROW(add_in_place(x, std::vector<float>{1}), UsageError);
}

// Gemma 2's logit cap: nearly the identity well inside the cap, never past it, odd.
TEST(CpuOps, SoftCapBendsTowardsTheCapAndNeverPassesIt) {
  std::vector<float> x = {0.0f, 0.3f, -0.3f, 30.0f, -90.0f, 1e30f};
  soft_cap(x, 30.0f);
  EXPECT_EQ(x[0], 0.0f);
  EXPECT_NEAR(x[1], 0.3f, 1e-5f);
  EXPECT_EQ(x[2], -x[1]);
  EXPECT_NEAR(x[3], 30.0f * std::tanh(1.0f), 1e-5f);
  EXPECT_NEAR(x[4], -30.0f * std::tanh(3.0f), 1e-5f);
  EXPECT_EQ(x[5], 30.0f);
  EXPECT_THROW(soft_cap(x, 0.0f), UsageError);
}

TEST(CpuOps, SoftmaxSumsToOneAndMatchesExpFormula) {
  auto x = random_floats(50, 17, 8.0f);
  const auto original = x;
  softmax(x);
  double total = 0;
  double norm = 0;
  for (const float v : original) norm += std::exp(static_cast<double>(v));
  std::vector<double> want;
  for (const float v : original) want.push_back(std::exp(static_cast<double>(v)) / norm);
  for (const float v : x) total += v;
  EXPECT_NEAR(total, 1.0, 1e-6);
  expect_close(x, want, 1e-9, 1e-6);
}

TEST(CpuOps, SoftmaxIsStableForHugeLogitsAndMasksMinusInfinity) {
  std::vector<float> x{1000.0f, 1001.0f, -kInf, -1000.0f};
  softmax(x);
  const double e = std::exp(1.0);
  EXPECT_NEAR(x[0], 1.0 / (1.0 + e), 1e-7);
  EXPECT_NEAR(x[1], e / (1.0 + e), 1e-7);
  EXPECT_EQ(x[2], 0.0f);
  EXPECT_EQ(x[3], 0.0f);
  std::vector<float> only{-kInf, 3.0f, -kInf};
  softmax(only);
  EXPECT_EQ(only, (std::vector<float>{0, 1, 0}));
  std::vector<float> none{-kInf, -kInf};
  softmax(none);
  EXPECT_EQ(none, (std::vector<float>{0, 0}));
  std::vector<float> empty;
  softmax(empty);
}

TEST(CpuOps, LogSoftmaxIsTheLogOfSoftmax) {
  const auto x = random_floats(40, 18, 20.0f);
  std::vector<float> logp(x.size());
  log_softmax(x, logp);
  auto p = x;
  softmax(p);
  for (std::size_t i = 0; i < x.size(); ++i) {
    ASSERT_NEAR(std::exp(static_cast<double>(logp[i])), p[i], 1e-6 + 1e-5 * p[i]) << i;
  }
  std::vector<float> big{5000.0f, 5000.0f, -kInf};
  log_softmax(big, big);
  EXPECT_NEAR(big[0], -std::log(2.0f), 1e-6);
  EXPECT_NEAR(big[1], -std::log(2.0f), 1e-6);
  EXPECT_EQ(big[2], -kInf);
}

}  // namespace
}  // namespace kvscope
