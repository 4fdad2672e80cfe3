// The Hadamard basis of int4 KV rows (kv/format/kv_rotation.h) on the device: the same
// butterflies in the same order as kv_rotate_rows, each rounded once, so the two give the
// same bits.
#include <string>

#include "backend/cuda_check.h"
#include "backend/cuda_launch.cuh"
#include "backend/kernel_launchers.h"

namespace kvscope::cuda {

namespace {

constexpr int kThreads = 128;

// One CTA turns one row x[head_dim], staged in shared memory: per power-of-two piece of
// head_dim (largest first), log2(piece) stages of pair sums and differences h apart, then
// the multiply by 1 / sqrt(piece).
__global__ void hadamard_rows_kernel(float* x, int head_dim) {
  KVSCOPE_DYNAMIC_SHARED(float, row);
  float* g = x + static_cast<std::int64_t>(blockIdx.x) * head_dim;
  for (int i = threadIdx.x; i < head_dim; i += blockDim.x) row[i] = g[i];
  __syncthreads();
  for (int done = 0; done < head_dim;) {
    int piece = 1;
    while (piece * 2 <= head_dim - done) piece *= 2;
    float* p = row + done;
    for (int h = 1; h < piece; h *= 2) {
      for (int t = threadIdx.x; t < piece / 2; t += blockDim.x) {
        const int j = (t / h) * 2 * h + t % h;
        const float a = p[j], b = p[j + h];
        p[j] = __fadd_rn(a, b);
        p[j + h] = __fsub_rn(a, b);
      }
      __syncthreads();
    }
    const float norm = __fdiv_rn(1.0f, __fsqrt_rn(static_cast<float>(piece)));
    for (int i = threadIdx.x; i < piece; i += blockDim.x) p[i] = __fmul_rn(p[i], norm);
    __syncthreads();
    done += piece;
  }
  for (int i = threadIdx.x; i < head_dim; i += blockDim.x) g[i] = row[i];
}

}  // namespace

void launch_hadamard_rows(float* x, std::int64_t n_rows, int head_dim, cudaStream_t stream) {
  if (head_dim < 1 || head_dim > 4096) {
    throw_usage_error("launch_hadamard_rows: head_dim " + std::to_string(head_dim) +
                      " out of range [1, 4096]");
  }
  if (n_rows <= 0) return;
  if (n_rows > 0x7fffffff) throw_usage_error("launch_hadamard_rows: too many rows");
  const auto smem = static_cast<std::size_t>(head_dim) * sizeof(float);
  launch_kernel(hadamard_rows_kernel, static_cast<unsigned>(n_rows), kThreads, smem, stream, x,
                head_dim);
  KVSCOPE_CUDA_CHECK_LAUNCH();
}

}  // namespace kvscope::cuda
