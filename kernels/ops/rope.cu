// Rotary position embedding from precomputed per-position cos/sin tables (the CPU Rope's
// own angles, so every scaling type is served and the angles are the reference's).
#include "backend/cuda_check.h"
#include "backend/cuda_launch.cuh"
#include "ops/device_math.cuh"

namespace kvscope::cuda {

namespace {

constexpr int kThreads = 128;

// grid: n_tokens; threads over (head, pair) of q's heads then k's heads.
__global__ void rope_kernel(RopeArgs a, float* q, float* k) {
  const int t = blockIdx.x;
  const int half = a.rope_dim / 2;
  const float* cs = a.cos + static_cast<std::int64_t>(a.pos[t]) * half;
  const float* sn = a.sin + static_cast<std::int64_t>(a.pos[t]) * half;
  const int n_items = (a.n_heads + a.n_kv_heads) * half;
  for (int item = threadIdx.x; item < n_items; item += blockDim.x) {
    const int head = item / half, i = item % half;
    float* x =
        head < a.n_heads
            ? q + (static_cast<std::int64_t>(t) * a.n_heads + head) * a.head_dim
            : k + (static_cast<std::int64_t>(t) * a.n_kv_heads + head - a.n_heads) * a.head_dim;
    float* pa = a.adjacent ? x + 2 * i : x + i;
    float* pb = a.adjacent ? pa + 1 : pa + half;
    const float x0 = *pa, x1 = *pb;
    *pa = x0 * cs[i] - x1 * sn[i];
    *pb = x0 * sn[i] + x1 * cs[i];
  }
}

}  // namespace

void launch_rope(const RopeArgs& args, float* q, float* k, cudaStream_t stream) {
  if (args.n_tokens <= 0) return;
  launch_kernel(rope_kernel, args.n_tokens, kThreads, 0, stream, args, q, k);
  KVSCOPE_CUDA_CHECK_LAUNCH();
}

}  // namespace kvscope::cuda
