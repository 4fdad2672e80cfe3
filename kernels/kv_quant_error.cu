// Read-back error of the KV slots a step wrote (kv_quant_error.h). grid (n_tokens,
// n_kv_heads), one warp per (token, KV head): lane i walks elements i, i + 32, ... of the
// head's K and V vectors, sums in double, and the warp's totals go to the layer's sums with
// four atomic adds.
#include "cuda_check.h"
#include "device_math.cuh"
#include "kv_quant_error.h"

namespace kvscope::cuda {

namespace {

__device__ inline double warp_sum_double(double v) {
  for (int o = kWarp / 2; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

__global__ void kv_quant_error_kernel(KvLayerLayout L, KvStepTables tab, const float* k,
                                      const float* v, KvErrorSums* sums) {
  const int t = blockIdx.x, head = blockIdx.y, lane = threadIdx.x;
  const int pos = tab.pos[t];
  const int block = tab.blocks[tab.table_start[t] + pos / L.block_size];
  const std::uint8_t* base = tab.pool + static_cast<std::int64_t>(block) * L.block_bytes;
  const std::int64_t vec = static_cast<std::int64_t>(head) * L.block_size + pos % L.block_size;
  const std::int64_t x_at = (static_cast<std::int64_t>(t) * L.n_kv_heads + head) * L.head_dim;

  const std::uint8_t* k_data = base + L.k_data + vec * L.k_stride;
  const auto* k_scales =
      reinterpret_cast<const std::uint16_t*>(base + L.k_scales + vec * 2 * L.k_n_scales);
  const auto* k_offsets = reinterpret_cast<const std::uint16_t*>(
      base + L.k_offsets + static_cast<std::int64_t>(head) * L.head_dim * 2);
  const std::uint8_t* v_data = base + L.v_data + vec * L.v_stride;
  const auto* v_scales =
      reinterpret_cast<const std::uint16_t*>(base + L.v_scales + vec * 2 * L.v_n_scales);

  double ke = 0.0, kx = 0.0, ve = 0.0, vx = 0.0;
  for (int i = lane; i < L.head_dim; i += kWarp) {
    // differences in double, as kv_quant_sq_error / kv_k4_sq_error take them
    const double xk = k[x_at + i], xv = v[x_at + i];
    const double dk = xk - kv_key_element(L.k_dtype, k_data, k_scales, k_offsets, i, L.k_group);
    const double dv = xv - kv_element(L.v_dtype, v_data, v_scales, i, L.v_group);
    ke += dk * dk;
    kx += xk * xk;
    ve += dv * dv;
    vx += xv * xv;
  }
  ke = warp_sum_double(ke);
  kx = warp_sum_double(kx);
  ve = warp_sum_double(ve);
  vx = warp_sum_double(vx);
  if (lane == 0) {
    atomicAdd(&sums->k_sq_error, ke);
    atomicAdd(&sums->k_sq_exact, kx);
    atomicAdd(&sums->v_sq_error, ve);
    atomicAdd(&sums->v_sq_exact, vx);
  }
}

}  // namespace

void launch_kv_quant_error(const KvLayerLayout& layout, const KvStepTables& tables, const float* k,
                           const float* v, int n_tokens, KvErrorSums* sums, cudaStream_t stream) {
  if (n_tokens <= 0) return;
  const dim3 grid(static_cast<unsigned>(n_tokens), static_cast<unsigned>(layout.n_kv_heads));
  kv_quant_error_kernel<<<grid, kWarp, 0, stream>>>(layout, tables, k, v, sums);
  KVSCOPE_CUDA_CHECK_LAUNCH();
}

}  // namespace kvscope::cuda
