// The fp16 rounding of activations before a cuBLAS GEMM (gemm.h).
#include "backend/cuda_check.h"
#include "backend/cuda_launch.cuh"
#include "ops/device_math.cuh"
#include "ops/gemm.h"

namespace kvscope::cuda {

namespace {

constexpr int kThreads = 256;

__global__ void float_to_half_kernel(const float* x, std::int64_t n, std::uint16_t* x16) {
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  // saturated to fp16's range (a large FFN activation must not become inf); NaN stays NaN
  const float v = x[i];
  x16[i] = float_to_half_bits(isnan(v) ? v : fminf(fmaxf(v, -65504.0f), 65504.0f));
}

}  // namespace

void launch_float_to_half(const float* x, std::int64_t n, std::uint16_t* x16, cudaStream_t stream) {
  if (n <= 0) return;
  launch_kernel(float_to_half_kernel, blocks_for(n, kThreads), kThreads, 0, stream, x, n, x16);
  KVSCOPE_CUDA_CHECK_LAUNCH();
}

}  // namespace kvscope::cuda
