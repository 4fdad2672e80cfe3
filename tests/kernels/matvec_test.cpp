// The matvec kernels against the CPU matvec (cpu_ops.h) for every device weight type, on
// odd row counts, several column counts and batches of tokens.
#include <vector>

#include <gtest/gtest.h>

#include "kernel_launchers.h"
#include "kernel_test_support.h"
#include "run/cpu_ops.h"
#include "run/thread_pool.h"

namespace kvscope {
namespace {

using test::device_zeros;
using test::expect_close;
using test::from_device;
using test::random_floats;
using test::to_device;

struct TypeCase {
  TensorType type;
  cuda::DeviceWeightType device;
};

class CudaMatvecTest : public ::testing::TestWithParam<TypeCase> {};

TEST_P(CudaMatvecTest, MatchesTheCpuMatvecOnTheSameStoredRows) {
  KVSCOPE_REQUIRE_CUDA();
  const TypeCase tc = GetParam();
  ThreadPool pool(1);
  for (const auto& [rows, cols, n_tokens] :
       {std::tuple{1, 32, 1}, std::tuple{37, 64, 1}, std::tuple{129, 288, 3},
        std::tuple{512, 4096, 2}, std::tuple{4099, 96, 5}}) {
    const auto values = random_floats(static_cast<std::size_t>(rows * cols), 7u + rows, 0.1f);
    const std::int64_t rb = row_bytes(tc.type, cols);
    std::vector<std::uint8_t> stored(static_cast<std::size_t>(rb * rows));
    for (int r = 0; r < rows; ++r) quantize_row(tc.type, &values[r * cols], &stored[r * rb], cols);
    const WeightView view{"w", tc.type, rows, cols, stored.data()};
    const auto x = random_floats(static_cast<std::size_t>(n_tokens * cols), 9u + cols);
    std::vector<float> ref(static_cast<std::size_t>(n_tokens * rows));
    matvec(pool, view, x, ref);

    auto dw = to_device(stored), dx = to_device(x);
    auto dy = device_zeros<float>(ref.size());
    const cuda::DeviceWeight w{tc.device, rows, cols, rb, dw.get()};
    cuda::launch_matvec(w, dx.as<float>(), n_tokens, dy.as<float>(), nullptr);
    // the CPU and the GPU sum in different orders; values are O(sqrt(cols) * 0.1)
    expect_close(from_device<float>(dy, ref.size()), ref, 2e-5f * static_cast<float>(cols) / 32,
                 1e-4f,
                 std::string(tensor_type_name(tc.type)) + " " + std::to_string(rows) + "x" +
                     std::to_string(cols) + " T=" + std::to_string(n_tokens));
  }
}

INSTANTIATE_TEST_SUITE_P(WeightTypes, CudaMatvecTest,
                         ::testing::Values(TypeCase{TensorType::F32, cuda::DeviceWeightType::F32},
                                           TypeCase{TensorType::F16, cuda::DeviceWeightType::F16},
                                           TypeCase{TensorType::Q8_0, cuda::DeviceWeightType::Q8_0},
                                           TypeCase{TensorType::Q4_0,
                                                    cuda::DeviceWeightType::Q4_0}),
                         [](const auto& p) { return std::string(tensor_type_name(p.param.type)); });

}  // namespace
}  // namespace kvscope
