// The matvec kernels against the CPU matvec (cpu_ops.h) for every device weight type, on
// odd row counts (a warp's second row past the end), column counts that leave a warp step
// partly used or give odd block counts, and batches of tokens (the prompt path). The launch
// checks run without a device.
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "backend/kernel_launchers.h"
#include "cpu/cpu_ops.h"
#include "cpu/thread_pool.h"
#include "kernel_test_support.h"
#include "util/error.h"

namespace kvscope {
namespace {

using test::device_zeros;
using test::expect_close;
using test::from_device;
using test::random_floats;
using test::to_device;

using TypeCase = test::WeightTypeCase;

using Shape = std::tuple<int, int, int>;  // rows, cols, n_tokens

std::vector<Shape> shapes_for(TensorType type) {
  const std::int64_t block = tensor_type_info(type).block_elems;
  if (block == 256) {
    return {{1, 256, 1},    {37, 512, 1},   {129, 2304, 3},
            {512, 4096, 2}, {4099, 256, 5}, {67, 11008, 1}};
  }
  std::vector<Shape> s = {{1, 32, 1},     {37, 64, 1},   {129, 288, 3},
                          {512, 4096, 2}, {4099, 96, 5}, {67, 1376, 1}};
  if (block == 1) {  // cols % 8 != 0 (F16 element by element) and % 4 != 0 (F32 too)
    s.push_back({37, 100, 3});
    s.push_back({19, 37, 2});
  }
  return s;
}

class CudaMatvecTest : public ::testing::TestWithParam<TypeCase> {};

TEST_P(CudaMatvecTest, MatchesTheCpuMatvecOnTheSameStoredRows) {
  KVSCOPE_REQUIRE_CUDA();
  const TypeCase tc = GetParam();
  ThreadPool pool(1);
  for (const auto& [rows, cols, n_tokens] : shapes_for(tc.type)) {
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
    // accumulate adds the same products to what y holds: W x + W x, exactly twice the first
    const std::vector<float> once = from_device<float>(dy, ref.size());
    cuda::launch_matvec(w, dx.as<float>(), n_tokens, dy.as<float>(), nullptr, true);
    const std::vector<float> twice = from_device<float>(dy, ref.size());
    for (std::size_t i = 0; i < once.size(); ++i) {
      ASSERT_EQ(twice[i], 2.0f * once[i])
          << tensor_type_name(tc.type) << " accumulate, [" << i << "]";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(WeightTypes, CudaMatvecTest, ::testing::ValuesIn(test::all_weight_types()),
                         test::weight_type_test_name);

// A stand-in device address: the checks below throw before anything is launched.
template <typename T>
T* fake_device_pointer(std::uintptr_t address) {
  return reinterpret_cast<T*>(address);
}

TEST(CudaMatvecChecks, RejectsAWeightWhoseRowsAreNotWholeBlocks) {
  const auto* data = fake_device_pointer<const void>(1 << 20);
  float* y = fake_device_pointer<float>(2 << 20);
  const float* x = fake_device_pointer<const float>(3 << 20);
  const cuda::DeviceWeight k{cuda::DeviceWeightType::Q4_K, 4, 288, 144, data};
  EXPECT_THROW(cuda::launch_matvec(k, x, 1, y, nullptr), UsageError);
  const cuda::DeviceWeight legacy{cuda::DeviceWeightType::Q5_0, 4, 48, 22, data};
  EXPECT_THROW(cuda::launch_matvec(legacy, x, 1, y, nullptr), UsageError);
  // whole blocks, but row_bytes that is not the type's
  const cuda::DeviceWeight wrong_stride{cuda::DeviceWeightType::Q6_K, 4, 256, 256, data};
  EXPECT_THROW(cuda::launch_matvec(wrong_stride, x, 1, y, nullptr), UsageError);
}

TEST(CudaMatvecChecks, RejectsMisalignedQuantizedWeightsOrActivations) {
  const float* x = fake_device_pointer<const float>(3 << 20);
  float* y = fake_device_pointer<float>(2 << 20);
  const cuda::DeviceWeight off{cuda::DeviceWeightType::Q4_K, 4, 256, 144,
                               fake_device_pointer<const void>((1 << 20) + 2)};
  EXPECT_THROW(cuda::launch_matvec(off, x, 1, y, nullptr), UsageError);
  const cuda::DeviceWeight w{cuda::DeviceWeightType::Q6_K, 4, 256, 210,
                             fake_device_pointer<const void>(1 << 20)};
  EXPECT_THROW(cuda::launch_matvec(w, x + 1, 1, y, nullptr), UsageError);
}

}  // namespace
}  // namespace kvscope
