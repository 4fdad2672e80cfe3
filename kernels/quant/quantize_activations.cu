// Activations to 8-bit codes (quant_activations.h), the input of the integer-dot matvec
// kernels: one warp per block of 32 values, each lane one value.
#include "backend/cuda_check.h"
#include "backend/cuda_launch.cuh"
#include "backend/kernel_launchers.h"
#include "quant/quant_activations.cuh"

namespace kvscope::cuda {

namespace {

constexpr int kWarpsPerCta = 8;

// grid: blocks_for(n_blocks, kWarpsPerCta); warp w of CTA c quantizes activation block
// c * kWarpsPerCta + w of x [n_blocks][32].
__global__ void quantize_q8_kernel(const float* __restrict__ x, std::int64_t n_blocks,
                                   std::int8_t* __restrict__ q, float* __restrict__ d) {
  const std::int64_t b = static_cast<std::int64_t>(blockIdx.x) * kWarpsPerCta + threadIdx.x / kWarp;
  if (b >= n_blocks) return;  // uniform over the warp
  const int lane = threadIdx.x % kWarp;
  quantize_q8_warp(x[b * qd::kQ8Block + lane], lane, q + b * qd::kQ8Block, d + b);
}

}  // namespace

void launch_quantize_q8(const float* x, std::int64_t n_values, std::int8_t* q, float* d,
                        cudaStream_t stream) {
  if (n_values % qd::kQ8Block != 0) {
    throw_usage_error("launch_quantize_q8: " + std::to_string(n_values) +
                      " values are not whole blocks of 32");
  }
  const std::int64_t n_blocks = n_values / qd::kQ8Block;
  if (n_blocks == 0) return;
  launch_kernel(quantize_q8_kernel, blocks_for(n_blocks, kWarpsPerCta), kWarpsPerCta * kWarp, 0,
                stream, x, n_blocks, q, d);
  KVSCOPE_CUDA_CHECK_LAUNCH();
}

}  // namespace kvscope::cuda
