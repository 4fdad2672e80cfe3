// RMSNorm: one CTA per row. As the CPU reference (cpu_ops.h rmsnorm): scale = 1/sqrt(mean
// of squares + eps), out = (x * scale) * weight; the squares are summed in float here.
#include <string>

#include "backend/cuda_check.h"
#include "backend/cuda_launch.cuh"
#include "backend/kernel_launchers.h"
#include "quant/quant_activations.cuh"

namespace kvscope::cuda {

namespace {

constexpr int kThreads = 256;

// grid: n_rows. Row r reads x[rows ? rows[r] : r] (gathering the rows that need logits).
// kCodes: each warp's 32 consecutive outputs of a pass are one block of codes (n % 32 == 0
// keeps every warp whole in every pass).
template <bool kCodes>
__global__ void rmsnorm_kernel(const float* x, const int* rows, const float* weight, int n,
                               float eps, float* out, Q8Codes codes) {
  __shared__ float scratch[32];
  const int r = blockIdx.x;
  const float* xr = x + static_cast<std::int64_t>(rows ? rows[r] : r) * n;
  float* yr = out + static_cast<std::int64_t>(r) * n;
  float sum = 0.0f;
  for (int i = threadIdx.x; i < n; i += blockDim.x) sum += xr[i] * xr[i];
  sum = block_sum(sum, scratch);
  const float scale = 1.0f / sqrtf(sum / static_cast<float>(n) + eps);
  for (int i = threadIdx.x; i < n; i += blockDim.x) {
    const float y = (xr[i] * scale) * weight[i];
    yr[i] = y;
    if constexpr (kCodes) {
      const std::int64_t at = static_cast<std::int64_t>(r) * n + i;  // this lane's value
      const int lane = threadIdx.x % kWarp;
      quantize_q8_warp(y, lane, codes.q + (at - lane), codes.d + at / qd::kQ8Block);
    }
  }
}

}  // namespace

void launch_rmsnorm(const float* x, const int* rows, const float* weight, int n_rows, int n,
                    float eps, float* out, cudaStream_t stream, Q8Codes codes) {
  if (codes.q && n % qd::kQ8Block != 0) {
    throw_usage_error("launch_rmsnorm: 8-bit codes need rows of whole 32-value blocks, not " +
                      std::to_string(n));
  }
  if (n_rows <= 0) return;
  if (codes.q) {
    launch_kernel(rmsnorm_kernel<true>, n_rows, kThreads, 0, stream, x, rows, weight, n, eps, out,
                  codes);
  } else {
    launch_kernel(rmsnorm_kernel<false>, n_rows, kThreads, 0, stream, x, rows, weight, n, eps, out,
                  codes);
  }
  KVSCOPE_CUDA_CHECK_LAUNCH();
}

}  // namespace kvscope::cuda
