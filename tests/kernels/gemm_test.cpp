// The cuBLAS prompt projections (gemm.h) against the CPU matvec on the same stored rows,
// with the activations rounded to fp16 on both sides (the GEMM's one intended rounding), for
// every device weight type, batches of tokens, and slabs that do not divide the rows.
#include <cuda_runtime.h>

#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "backend/kernel_launchers.h"
#include "cpu/cpu_ops.h"
#include "cpu/thread_pool.h"
#include "kernel_test_support.h"
#include "ops/gemm.h"
#include "util/half.h"

namespace kvscope {
namespace {

using test::device_zeros;
using test::expect_close;
using test::from_device;
using test::random_floats;
using test::to_device;

TEST(GemmSlabRows, FillsTheScratchWithWholeRowsAndNeverGoesBelowOneOrAboveTheMatrix) {
  EXPECT_EQ(cuda::gemm_slab_rows(4099, 96, 96 * 2 * 1000), 1000);
  EXPECT_EQ(cuda::gemm_slab_rows(4099, 96, 96 * 2 * 1000 + 191), 1000);
  EXPECT_EQ(cuda::gemm_slab_rows(10, 96, std::size_t{1} << 30), 10);
  EXPECT_EQ(cuda::gemm_slab_rows(10, 4096, 100), 1);  // scratch smaller than a row
}

using TypeCase = test::WeightTypeCase;

class CudaGemmTest : public ::testing::TestWithParam<TypeCase> {};

std::vector<float> rounded_to_fp16(std::vector<float> x) {
  for (float& v : x) v = fp16_to_float(float_to_fp16(v));
  return x;
}

TEST_P(CudaGemmTest, MatchesTheCpuMatvecOnFp16RoundedActivations) {
  KVSCOPE_REQUIRE_CUDA();
  const TypeCase tc = GetParam();
  ThreadPool pool(1);
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  for (const auto& [rows, cols, n_tokens, scratch_rows] :
       {std::tuple{1, 256, 1, 1}, std::tuple{37, 512, 16, 37}, std::tuple{4099, 256, 5, 1000},
        std::tuple{512, 4096, 33, 100}}) {
    const auto values = random_floats(static_cast<std::size_t>(rows * cols), 3u + rows, 0.1f);
    const std::int64_t rb = row_bytes(tc.type, cols);
    std::vector<std::uint8_t> stored(static_cast<std::size_t>(rb * rows));
    for (int r = 0; r < rows; ++r) quantize_row(tc.type, &values[r * cols], &stored[r * rb], cols);
    const WeightView view{"w", tc.type, rows, cols, stored.data()};
    const auto x = random_floats(static_cast<std::size_t>(n_tokens * cols), 5u + cols);
    std::vector<float> ref(static_cast<std::size_t>(n_tokens * rows));
    matvec(pool, view, rounded_to_fp16(x), ref);

    auto dw = to_device(stored), dx = to_device(x);
    auto dy = device_zeros<float>(ref.size());
    const cuda::DeviceWeight w{tc.device, rows, cols, rb, dw.get()};
    cuda::ProjectionGemm gemm(test::test_allocator(), stream,
                              static_cast<std::size_t>(scratch_rows * cols) * 2);
    // y starts at -ref: with accumulate, y + W x is the (near-zero) difference from the CPU
    const std::vector<float> minus_ref = [&] {
      std::vector<float> m(ref);
      for (float& v : m) v = -v;
      return m;
    }();
    auto dy_acc = to_device(minus_ref);
    gemm.run(w, dx.as<float>(), n_tokens, dy.as<float>());
    gemm.run(w, dx.as<float>(), n_tokens, dy_acc.as<float>(), true);
    ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    const std::vector<float> zeros(ref.size(), 0.0f);
    expect_close(from_device<float>(dy_acc, ref.size()), zeros,
                 1e-3f * static_cast<float>(cols) / 256 + 2e-3f * 3.0f, 0.0f,
                 std::string(tensor_type_name(tc.type)) + " accumulate");
    // fp16 weights of the dequantized values and tensor-core summation order differ from the
    // CPU; outputs are O(sqrt(cols) * 0.03)
    expect_close(from_device<float>(dy, ref.size()), ref, 1e-3f * static_cast<float>(cols) / 256,
                 2e-3f,
                 std::string(tensor_type_name(tc.type)) + " " + std::to_string(rows) + "x" +
                     std::to_string(cols) + " T=" + std::to_string(n_tokens) +
                     " slab=" + std::to_string(scratch_rows));
  }
  cudaStreamDestroy(stream);
}

INSTANTIATE_TEST_SUITE_P(WeightTypes, CudaGemmTest, ::testing::ValuesIn(test::all_weight_types()),
                         test::weight_type_test_name);

}  // namespace
}  // namespace kvscope
