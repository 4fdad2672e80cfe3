// Element-wise kernels of the decoder: the SwiGLU gate, the residual add and bias adds.
#include "cuda_check.h"
#include "device_math.cuh"

namespace kvscope::cuda {

namespace {

constexpr int kThreads = 256;

// out = silu(gate) * up, silu(x) = x / (1 + e^-x) as the CPU's silu().
__global__ void swiglu_kernel(const float* gate, const float* up, float* out, std::int64_t n) {
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float g = gate[i];
  out[i] = g / (1.0f + expf(-g)) * up[i];
}

__global__ void add_kernel(float* x, const float* y, std::int64_t n) {
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) x[i] += y[i];
}

// y[t][i] += bias[i]; one thread per element of y ([n_rows][n]).
__global__ void add_bias_kernel(float* y, const float* bias, std::int64_t total, int n) {
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < total) y[i] += bias[i % n];
}

}  // namespace

void launch_swiglu(const float* gate, const float* up, float* out, std::int64_t n,
                   cudaStream_t stream) {
  if (n <= 0) return;
  swiglu_kernel<<<blocks_for(n, kThreads), kThreads, 0, stream>>>(gate, up, out, n);
  KVSCOPE_CUDA_CHECK_LAUNCH();
}

void launch_add_in_place(float* x, const float* y, std::int64_t n, cudaStream_t stream) {
  if (n <= 0) return;
  add_kernel<<<blocks_for(n, kThreads), kThreads, 0, stream>>>(x, y, n);
  KVSCOPE_CUDA_CHECK_LAUNCH();
}

void launch_add_bias(float* y, const float* bias, int n_rows, int n, cudaStream_t stream) {
  const std::int64_t total = static_cast<std::int64_t>(n_rows) * n;
  if (total <= 0) return;
  add_bias_kernel<<<blocks_for(total, kThreads), kThreads, 0, stream>>>(y, bias, total, n);
  KVSCOPE_CUDA_CHECK_LAUNCH();
}

}  // namespace kvscope::cuda
