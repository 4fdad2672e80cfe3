// Greedy sampling on the device: the index of each row's largest logit, so a greedy step
// copies one id per row to the host instead of [vocab] floats (CudaBackend::forward_greedy).
#include <cfloat>

#include "backend/cuda_check.h"
#include "backend/cuda_launch.cuh"
#include "backend/kernel_launchers.h"
#include "ops/device_math.cuh"

namespace kvscope::cuda {

namespace {

constexpr int kThreads = 256;

// Whether (v, i) beats (best, best_i): larger, or equal with the lower index. NaN never wins.
__device__ inline bool better(float v, int i, float best, int best_i) {
  return v > best || (v == best && i < best_i);
}

// A value no pick may be made past: the forward pass broke.
__device__ inline bool invalid(float v) {
  return isnan(v) || (isinf(v) && v > 0.0f);
}

// grid: n_rows.
__global__ void argmax_kernel(const float* x, int n, int* out) {
  __shared__ float vals[kThreads / kWarp];
  __shared__ int idxs[kThreads / kWarp];
  __shared__ bool bads[kThreads / kWarp];
  const float* row = x + static_cast<std::int64_t>(blockIdx.x) * n;
  float best = -FLT_MAX;  // -inf never beats it: an all -inf row keeps best_i == n
  int best_i = n;         // "none yet": loses every tie against a real index
  bool bad = false;
  for (int i = threadIdx.x; i < n; i += blockDim.x) {
    const float v = row[i];
    bad |= invalid(v);
    if (better(v, i, best, best_i)) best = v, best_i = i;
  }
  for (int o = kWarp / 2; o > 0; o /= 2) {
    const float v = __shfl_xor_sync(0xffffffffu, best, o);
    const int i = __shfl_xor_sync(0xffffffffu, best_i, o);
    if (better(v, i, best, best_i)) best = v, best_i = i;
  }
  bad = __any_sync(0xffffffffu, bad);
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  if (lane == 0) vals[warp] = best, idxs[warp] = best_i, bads[warp] = bad;
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int w = 1; w < kThreads / kWarp; ++w) {
      if (better(vals[w], idxs[w], best, best_i)) best = vals[w], best_i = idxs[w];
      bad |= bads[w];
    }
    out[blockIdx.x] = bad ? kArgmaxInvalid : best_i < n ? best_i : kArgmaxAllMasked;
  }
}

}  // namespace

void launch_argmax(const float* x, int n_rows, int n, int* out, cudaStream_t stream) {
  if (n_rows <= 0) return;
  launch_kernel(argmax_kernel, n_rows, kThreads, 0, stream, x, n, out);
  KVSCOPE_CUDA_CHECK_LAUNCH();
}

}  // namespace kvscope::cuda
