// Element-wise kernels of the decoder: the SwiGLU and GeGLU gates, the residual add, bias
// adds, scaling (Gemma's embeddings) and soft-capping (Gemma 2's logits).
#include <string>

#include "backend/cuda_check.h"
#include "backend/cuda_launch.cuh"
#include "backend/kernel_launchers.h"
#include "quant/quant_activations.cuh"

namespace kvscope::cuda {

namespace {

constexpr int kThreads = 256;

// out = silu(gate) * up, silu(x) = x / (1 + e^-x) as the CPU's silu().
// kCodes: a warp's 32 elements are one block of codes (n % 32 == 0 keeps warps whole).
template <bool kCodes>
__global__ void swiglu_kernel(const float* gate, const float* up, float* out, std::int64_t n,
                              Q8Codes codes) {
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float g = gate[i];
  const float y = g / (1.0f + expf(-g)) * up[i];
  out[i] = y;
  if constexpr (kCodes) {
    const int lane = threadIdx.x % kWarp;
    quantize_q8_warp(y, lane, codes.q + (i - lane), codes.d + i / qd::kQ8Block);
  }
}

// out = gelu_tanh(gate) * up as the CPU's geglu_row writes it: gelu_tanh(x) = x / (1 + e^-z),
// z = 2 sqrt(2 / pi) x (1 + 0.044715 x^2) (expf here, ggml's polynomial exponential there: a
// few ulp apart). Codes as swiglu_kernel.
template <bool kCodes>
__global__ void geglu_kernel(const float* gate, const float* up, float* out, std::int64_t n,
                             Q8Codes codes) {
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  constexpr float kA = 1.5957691216057308f;  // 2 sqrt(2 / pi)
  constexpr float kB = 0.044715f;
  const float g = gate[i];
  const float z = kA * g * (1.0f + kB * g * g);
  const float y = g / (1.0f + expf(0.0f - z)) * up[i];
  out[i] = y;
  if constexpr (kCodes) {
    const int lane = threadIdx.x % kWarp;
    quantize_q8_warp(y, lane, codes.q + (i - lane), codes.d + i / qd::kQ8Block);
  }
}

__global__ void scale_kernel(float* x, float s, std::int64_t n) {
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= s;
}

// x = cap tanh(x / cap), as the CPU's soft_cap (x times the reciprocal, then tanh).
__global__ void soft_cap_kernel(float* x, float inv_cap, float cap, std::int64_t n) {
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) x[i] = tanhf(x[i] * inv_cap) * cap;
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

using GateKernel = void (*)(const float*, const float*, float*, std::int64_t, Q8Codes);

// out = act(gate) * up through one of a gate kernel's two forms (with codes, without).
void launch_gate(const char* name, GateKernel with_codes, GateKernel plain, const float* gate,
                 const float* up, float* out, std::int64_t n, cudaStream_t stream, Q8Codes codes) {
  if (codes.q && n % qd::kQ8Block != 0) {
    throw_usage_error(std::string(name) + ": 8-bit codes need whole 32-value blocks, not " +
                      std::to_string(n) + " values");
  }
  if (n <= 0) return;
  launch_kernel(codes.q ? with_codes : plain, blocks_for(n, kThreads), kThreads, 0, stream, gate,
                up, out, n, codes);
  KVSCOPE_CUDA_CHECK_LAUNCH();
}

}  // namespace

void launch_swiglu(const float* gate, const float* up, float* out, std::int64_t n,
                   cudaStream_t stream, Q8Codes codes) {
  launch_gate("launch_swiglu", swiglu_kernel<true>, swiglu_kernel<false>, gate, up, out, n, stream,
              codes);
}

void launch_geglu(const float* gate, const float* up, float* out, std::int64_t n,
                  cudaStream_t stream, Q8Codes codes) {
  launch_gate("launch_geglu", geglu_kernel<true>, geglu_kernel<false>, gate, up, out, n, stream,
              codes);
}

void launch_scale(float* x, float s, std::int64_t n, cudaStream_t stream) {
  if (n <= 0) return;
  launch_kernel(scale_kernel, blocks_for(n, kThreads), kThreads, 0, stream, x, s, n);
  KVSCOPE_CUDA_CHECK_LAUNCH();
}

void launch_soft_cap(float* x, float cap, std::int64_t n, cudaStream_t stream) {
  if (!(cap > 0.0f)) throw_usage_error("launch_soft_cap: the cap must be positive");
  if (n <= 0) return;
  launch_kernel(soft_cap_kernel, blocks_for(n, kThreads), kThreads, 0, stream, x, 1.0f / cap, cap,
                n);
  KVSCOPE_CUDA_CHECK_LAUNCH();
}

void launch_add_in_place(float* x, const float* y, std::int64_t n, cudaStream_t stream) {
  if (n <= 0) return;
  launch_kernel(add_kernel, blocks_for(n, kThreads), kThreads, 0, stream, x, y, n);
  KVSCOPE_CUDA_CHECK_LAUNCH();
}

void launch_add_bias(float* y, const float* bias, int n_rows, int n, cudaStream_t stream) {
  const std::int64_t total = static_cast<std::int64_t>(n_rows) * n;
  if (total <= 0) return;
  launch_kernel(add_bias_kernel, blocks_for(total, kThreads), kThreads, 0, stream, y, bias, total,
                n);
  KVSCOPE_CUDA_CHECK_LAUNCH();
}

}  // namespace kvscope::cuda
