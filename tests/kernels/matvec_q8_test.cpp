// The 8-bit-activation matvec kernels (matvec.cu launch_matvec_q8) against the same per-lane code
// run on the host (quant_dequant.h lane_dots, itself checked against the CPU's dot products in
// quant_dequant_test), for every quantized weight type, on odd row counts, partly used warp
// steps and batches of tokens. The launch checks run without a device.
#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "backend/kernel_launchers.h"
#include "kernel_test_support.h"
#include "quant/quant_activations.h"
#include "quant/quant_dequant.h"
#include "util/error.h"

namespace kvscope {
namespace {

namespace qd = cuda::qd;
using test::device_zeros;
using test::from_device;
using test::random_floats;
using test::to_device;

using Shape = std::tuple<int, int, int>;  // rows, cols, n_tokens

std::vector<Shape> q8_shapes(TensorType type) {
  if (tensor_type_info(type).block_elems == 256) {
    return {{1, 256, 1}, {37, 512, 1}, {129, 2304, 3}, {4099, 256, 5}, {67, 11008, 1}};
  }
  return {{1, 32, 1}, {37, 64, 1}, {129, 288, 3}, {4099, 96, 5}, {67, 1376, 1}};
}

// y[t][r] as the warp computes it: the 32 lanes' lane_dots (rows r and r + 1), summed.
// The device sums the lanes in a butterfly, so the two agree to rounding.
template <class Codec>
std::vector<float> host_lanes(const std::vector<std::uint8_t>& stored, std::int64_t row_bytes,
                              int rows, int cols, int n_tokens, const std::vector<std::int8_t>& q,
                              const std::vector<float>& d) {
  std::vector<float> y(static_cast<std::size_t>(rows * n_tokens));
  for (int t = 0; t < n_tokens; ++t) {
    for (int r = 0; r < rows; r += 2) {
      const std::uint8_t* rp[2] = {&stored[r * row_bytes],
                                   &stored[std::min(r + 1, rows - 1) * row_bytes]};
      float total[2] = {0.0f, 0.0f};
      for (int lane = 0; lane < qd::kLanes; ++lane) {
        float acc[2] = {0.0f, 0.0f};
        const qd::Q8Activations<Codec> acts{q.data(), d.data()};
        qd::lane_dots<Codec, 2>(rp, acts.token(t, cols), cols / Codec::kValues, lane, acc);
        total[0] += acc[0], total[1] += acc[1];
      }
      y[static_cast<std::size_t>(t * rows + r)] = total[0];
      if (r + 1 < rows) y[static_cast<std::size_t>(t * rows + r + 1)] = total[1];
    }
  }
  return y;
}

// f.template operator()<Codec>() for the quantized type's codec.
template <class F>
void with_quant_codec_host(TensorType type, F&& f) {
  switch (type) {
    case TensorType::Q8_0:
      return f.template operator()<qd::Q8_0>();
    case TensorType::Q4_0:
      return f.template operator()<qd::Q4_0>();
    case TensorType::Q4_1:
      return f.template operator()<qd::Q4_1>();
    case TensorType::Q5_0:
      return f.template operator()<qd::Q5_0>();
    case TensorType::Q5_1:
      return f.template operator()<qd::Q5_1>();
    case TensorType::Q4_K:
      return f.template operator()<qd::Q4_K>();
    case TensorType::Q5_K:
      return f.template operator()<qd::Q5_K>();
    case TensorType::Q6_K:
      return f.template operator()<qd::Q6_K>();
    default:
      FAIL() << "not a quantized type: " << tensor_type_name(type);
  }
}

class CudaMatvecQ8Test : public ::testing::TestWithParam<test::WeightTypeCase> {};

// Without a device the host half still runs (once): the lane code over these shapes.
TEST_P(CudaMatvecQ8Test, MatchesTheLaneCodeOnTheHost) {
  const test::WeightTypeCase tc = GetParam();
  for (const auto& [rows, cols, n_tokens] : q8_shapes(tc.type)) {
    const auto values = random_floats(static_cast<std::size_t>(rows * cols), 7u + rows, 0.1f);
    const std::int64_t rb = row_bytes(tc.type, cols);
    std::vector<std::uint8_t> stored(static_cast<std::size_t>(rb * rows));
    for (int r = 0; r < rows; ++r) quantize_row(tc.type, &values[r * cols], &stored[r * rb], cols);
    const auto x = random_floats(static_cast<std::size_t>(n_tokens * cols), 9u + cols);
    std::vector<std::int8_t> q(x.size());
    std::vector<float> d(x.size() / 32);
    qd::quantize_q8_reference(x.data(), static_cast<std::int64_t>(x.size()), q.data(), d.data());
    std::vector<float> want;
    with_quant_codec_host(tc.type, [&]<class Codec>() {
      want = host_lanes<Codec>(stored, rb, rows, cols, n_tokens, q, d);
    });
    KVSCOPE_REQUIRE_CUDA();

    auto dw = to_device(stored), dq = to_device(q), dd = to_device(d);
    auto dy = device_zeros<float>(want.size());
    const cuda::DeviceWeight w{tc.device, rows, cols, rb, dw.get()};
    cuda::launch_matvec_q8(w, dq.as<std::int8_t>(), dd.as<float>(), n_tokens, dy.as<float>(),
                           nullptr);
    const std::string what = std::string(tensor_type_name(tc.type)) + " " + std::to_string(rows) +
                             "x" + std::to_string(cols) + " T=" + std::to_string(n_tokens);
    test::expect_close(from_device<float>(dy, want.size()), want,
                       1e-5f * static_cast<float>(cols) / 32, 1e-4f, what);
    const std::vector<float> once = from_device<float>(dy, want.size());
    cuda::launch_matvec_q8(w, dq.as<std::int8_t>(), dd.as<float>(), n_tokens, dy.as<float>(),
                           nullptr, true);
    const std::vector<float> twice = from_device<float>(dy, want.size());
    for (std::size_t i = 0; i < once.size(); ++i) {
      ASSERT_EQ(twice[i], 2.0f * once[i]) << what << " accumulate, [" << i << "]";
    }
  }
}

std::vector<test::WeightTypeCase> quantized_types() {
  std::vector<test::WeightTypeCase> out;
  for (const auto& tc : test::all_weight_types()) {
    if (tc.type != TensorType::F32 && tc.type != TensorType::F16) out.push_back(tc);
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(WeightTypes, CudaMatvecQ8Test, ::testing::ValuesIn(quantized_types()),
                         test::weight_type_test_name);

TEST(CudaMatvecQ8Checks, RejectsFloatWeightsAndMisalignedCodes) {
  const auto* data = reinterpret_cast<const void*>(std::uintptr_t{1} << 20);
  const auto* q = reinterpret_cast<const std::int8_t*>(std::uintptr_t{3} << 20);
  const auto* d = reinterpret_cast<const float*>(std::uintptr_t{5} << 20);
  auto* y = reinterpret_cast<float*>(std::uintptr_t{2} << 20);
  const cuda::DeviceWeight f16{cuda::DeviceWeightType::F16, 4, 64, 128, data};
  EXPECT_THROW(cuda::launch_matvec_q8(f16, q, d, 1, y, nullptr), UsageError);
  const cuda::DeviceWeight q4{cuda::DeviceWeightType::Q4_0, 4, 64, 36, data};
  EXPECT_THROW(cuda::launch_matvec_q8(q4, q + 4, d, 1, y, nullptr), UsageError);
  EXPECT_THROW(cuda::launch_matvec_q8(q4, q, d + 2, 1, y, nullptr), UsageError);
}

}  // namespace
}  // namespace kvscope
