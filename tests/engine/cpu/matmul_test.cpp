// Matmul: the projections of the CPU backend. Every output is the kernel's dot product of
// its row and token (the same bits however rows are split over threads and tokens into
// tiles), an input is encoded once for all the projections that read it, and with quantized
// activations off every type takes cpu_ops.h's float matvec bit for bit.
#include "cpu/matmul.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include <gtest/gtest.h>

#include "cpu/cpu_ops.h"
#include "cpu/quant_dot/interleaved.h"
#include "cpu/thread_pool.h"
#include "engine/cpu/random_weights.h"
#include "quant/tensor_type.h"
#include "util/error.h"

namespace kvscope {
namespace {

using test::random_floats;
using test::StoredWeight;

StoredWeight stored(TensorType type, std::int64_t rows, std::int64_t cols, std::uint32_t seed) {
  return test::stored_weight(type, rows, cols, seed);
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

std::vector<float> project(bool quantized, int threads, const WeightView& w,
                           const std::vector<float>& x) {
  ThreadPool pool(threads);
  Matmul mm(quantized);
  mm.set_input(x, w.cols);
  std::vector<float> y(x.size() / w.cols * w.rows);
  mm.project(pool, w, y);
  return y;
}

TEST(Matmul, EveryOutputIsTheKernelsDotProductOfItsRowAndToken) {
  const std::int64_t rows = 67, cols = 512, tokens = 7;  // odd rows, a partial last tile
  for (TensorType type : {TensorType::Q4_1, TensorType::Q8_0, TensorType::Q6_K, TensorType::F16}) {
    const StoredWeight w = stored(type, rows, cols, 3);
    const std::vector<float> x = random_floats(tokens * cols, 4, 1.0f);
    const std::vector<float> y = project(true, 2, w.view, x);
    // one token at a time, through the kernel directly
    Matmul mm(true);
    ThreadPool one(1);
    for (std::int64_t t = 0; t < tokens; ++t) {
      const std::vector<float> xt(x.begin() + t * cols, x.begin() + (t + 1) * cols);
      mm.set_input(xt, cols);
      std::vector<float> yt(rows);
      mm.project(one, w.view, yt);
      for (std::int64_t r = 0; r < rows; ++r) {
        EXPECT_EQ(std::memcmp(&yt[r], &y[t * rows + r], sizeof(float)), 0)
            << tensor_type_name(type) << " token " << t << " row " << r;
      }
    }
  }
}

TEST(Matmul, OneThreadAndTwoGiveTheSameBits) {
  const StoredWeight w = stored(TensorType::Q4_K, 300, 768, 5);
  const std::vector<float> x = random_floats(9 * 768, 6, 1.0f);
  EXPECT_TRUE(same_bits(project(true, 1, w.view, x), project(true, 2, w.view, x)));
}

TEST(Matmul, WithQuantizedActivationsOffEveryTypeIsTheFloatMatvec) {
  for (TensorType type : {TensorType::Q4_0, TensorType::Q5_K, TensorType::BF16, TensorType::F32}) {
    const StoredWeight w = stored(type, 40, 256, 7);
    const std::vector<float> x = random_floats(3 * 256, 8, 1.0f);
    ThreadPool pool(2);
    std::vector<float> want(3 * 40);
    matvec(pool, w.view, x, want);
    EXPECT_TRUE(same_bits(project(false, 2, w.view, x), want)) << tensor_type_name(type);
  }
}

TEST(Matmul, F32WeightsKeepLlamaCppsFloatOrderEvenWithQuantizedActivations) {
  const StoredWeight w = stored(TensorType::F32, 33, 64, 9);
  const std::vector<float> x = random_floats(2 * 64, 10, 1.0f);
  ThreadPool pool(2);
  std::vector<float> want(2 * 33);
  matvec(pool, w.view, x, want);
  EXPECT_TRUE(same_bits(project(true, 2, w.view, x), want));
}

TEST(Matmul, QuantizedActivationsFollowTheFloatResultClosely) {
  const StoredWeight w = stored(TensorType::Q4_1, 64, 576, 11);
  const std::vector<float> x = random_floats(576, 12, 1.0f);
  const std::vector<float> exact = project(false, 1, w.view, x);
  const std::vector<float> q8 = project(true, 1, w.view, x);
  for (std::size_t i = 0; i < exact.size(); ++i) EXPECT_NEAR(q8[i], exact[i], 0.02f) << i;
}

// max |a - b| over all outputs
float max_error(const std::vector<float>& a, const std::vector<float>& b) {
  float worst = 0.0f;
  for (std::size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::abs(a[i] - b[i]));
  return worst;
}

// The second plane codes the first's rounding error, so what is left is about 1/254 of the
// one-plane error (the dot products' float sums add their own ~1e-6), in the row kernels
// and in the 8-row groups, for a short last group and a partial token tile too.
TEST(Matmul, TwoPlanesCutTheActivationCodesErrorByMoreThanTwentyTimes) {
  const std::int64_t rows = 67, cols = 576, tokens = 5;
  for (TensorType type : {TensorType::Q8_0, TensorType::Q4_1, TensorType::Q6_K}) {
    const std::int64_t n = type == TensorType::Q6_K ? 512 : cols;
    const StoredWeight w = stored(type, rows, n, 21);
    const std::vector<float> x = random_floats(tokens * n, 22, 1.0f);
    const std::vector<float> exact = project(false, 1, w.view, x);
    ThreadPool pool(2);
    Matmul mm(true);
    mm.set_input(x, n);
    std::vector<float> one(rows * tokens), two(rows * tokens);
    mm.project(pool, w.view, one);
    mm.project_two_planes(pool, w.view, two);
    EXPECT_LT(max_error(two, exact), max_error(one, exact) / 20) << tensor_type_name(type);
    if (!can_interleave(type)) continue;
    const InterleavedMatrix grouped(w.view);
    std::vector<float> two_grouped(rows * tokens);
    mm.project_two_planes(pool, w.view, two_grouped, {}, &grouped);
    EXPECT_LT(max_error(two_grouped, exact), max_error(one, exact) / 20)
        << tensor_type_name(type) << " in groups";
  }
}

TEST(Matmul, AfterTwoPlanesTheInputIsEncodedAsBeforeAndFloatInputsTakeOnePlane) {
  const StoredWeight q = stored(TensorType::Q4_1, 40, 256, 23);
  const StoredWeight f16 = stored(TensorType::F16, 40, 256, 24);
  const std::vector<float> x = random_floats(3 * 256, 25, 1.0f);
  ThreadPool pool(2);
  Matmul mm(true);
  mm.set_input(x, 256);
  std::vector<float> before(3 * 40), after(3 * 40), planes(3 * 40), f16_one(3 * 40);
  mm.project(pool, q.view, before);
  mm.project_two_planes(pool, q.view, planes);
  mm.project(pool, q.view, after);  // the caller's input, not the second plane's
  EXPECT_TRUE(same_bits(before, after));
  mm.project(pool, f16.view, f16_one);
  mm.project_two_planes(pool, f16.view, planes);  // fp16 activations: no codes to refine
  EXPECT_TRUE(same_bits(planes, f16_one));
}

TEST(Matmul, AMismatchedInputOrOutputIsAUsageError) {
  const StoredWeight w = stored(TensorType::Q8_0, 8, 64, 13);
  ThreadPool pool(1);
  Matmul mm(true);
  std::vector<float> x(3 * 32), y(3 * 8);
  mm.set_input(x, 32);
  EXPECT_THROW(mm.project(pool, w.view, y), UsageError);  // 32 inputs for a 64-column weight
  std::vector<float> x64(2 * 64), y_short(8);
  mm.set_input(x64, 64);
  EXPECT_THROW(mm.project(pool, w.view, y_short), UsageError);
  EXPECT_THROW(mm.set_input(x, 64), UsageError);  // 96 floats are not rows of 64
}

}  // namespace
}  // namespace kvscope
