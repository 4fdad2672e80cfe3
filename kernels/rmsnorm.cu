// RMSNorm: one CTA per row. As the CPU reference (cpu_ops.h rmsnorm): scale = 1/sqrt(mean
// of squares + eps), out = (x * scale) * weight; the squares are summed in float here.
#include "cuda_check.h"
#include "device_math.cuh"

namespace kvscope::cuda {

namespace {

constexpr int kThreads = 256;

// grid: n_rows. Row r reads x[rows ? rows[r] : r] (gathering the rows that need logits).
__global__ void rmsnorm_kernel(const float* x, const int* rows, const float* weight, int n,
                               float eps, float* out) {
  __shared__ float scratch[32];
  const int r = blockIdx.x;
  const float* xr = x + static_cast<std::int64_t>(rows ? rows[r] : r) * n;
  float* yr = out + static_cast<std::int64_t>(r) * n;
  float sum = 0.0f;
  for (int i = threadIdx.x; i < n; i += blockDim.x) sum += xr[i] * xr[i];
  sum = block_sum(sum, scratch);
  const float scale = 1.0f / sqrtf(sum / static_cast<float>(n) + eps);
  for (int i = threadIdx.x; i < n; i += blockDim.x) yr[i] = (xr[i] * scale) * weight[i];
}

}  // namespace

void launch_rmsnorm(const float* x, const int* rows, const float* weight, int n_rows, int n,
                    float eps, float* out, cudaStream_t stream) {
  if (n_rows <= 0) return;
  rmsnorm_kernel<<<n_rows, kThreads, 0, stream>>>(x, rows, weight, n, eps, out);
  KVSCOPE_CUDA_CHECK_LAUNCH();
}

}  // namespace kvscope::cuda
