// The host side of the fast paged attention path: which layouts it runs
// (fast_attention_unsupported), its launch (head tiles, the K dtype's instantiations) and the
// merge of its splits.
#include <algorithm>
#include <cfloat>
#include <cstdint>

#include "attention/paged_attention_choice.cuh"
#include "attention/paged_attention_fast.cuh"
#include "backend/cuda_check.h"
#include "backend/cuda_launch.cuh"

namespace kvscope::cuda {

namespace {

constexpr int kMergeThreads = 128;
constexpr int kMaxFastSplits = 4096;  // the merge keeps one weight a split in shared memory

int lane_bytes(KvDtype d) {
  return lane_data_bytes(k_lane_format(d));
}

bool aligned(std::int64_t x, std::int64_t n) {
  return x % n == 0;
}

// Max over the CTA (blockDim.x a multiple of 32); every thread gets it. scratch: 32 floats.
__device__ float block_max(float v, float* scratch) {
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  v = warp_max(v);
  __syncthreads();
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  v = lane < static_cast<int>(blockDim.x / kWarp) ? scratch[lane] : -FLT_MAX;
  return warp_max(v);
}

// grid (n_heads, n_tokens): the log-sum-exp merge of the splits of one head,
//   out = sum_s w_s acc_s / sum_s w_s l_s,  w_s = e^(m_s - max m) (0 for an empty split),
// with the weights computed once per head into shared memory [n_splits].
__global__ void fast_merge_kernel(int n_heads, int n_splits, int hd, const float* partial,
                                  float* out) {
  KVSCOPE_DYNAMIC_SHARED(float, weight);
  __shared__ float scratch[kWarp];
  const std::int64_t head = static_cast<std::int64_t>(blockIdx.y) * n_heads + blockIdx.x;
  const float* ml = partial + static_cast<std::int64_t>(gridDim.y) * n_heads * n_splits * hd +
                    head * n_splits * 2;
  float mx = -FLT_MAX;
  for (int s = threadIdx.x; s < n_splits; s += blockDim.x) {
    if (ml[2 * s + 1] > 0.0f) mx = fmaxf(mx, ml[2 * s]);
  }
  mx = block_max(mx, scratch);
  float total = 0.0f;
  for (int s = threadIdx.x; s < n_splits; s += blockDim.x) {
    const float w = ml[2 * s + 1] > 0.0f ? expf(ml[2 * s] - mx) : 0.0f;
    weight[s] = w;
    total += w * ml[2 * s + 1];
  }
  total = block_sum(total, scratch);  // its barriers also publish `weight`
  const float* acc = partial + head * n_splits * hd;
  for (int i = threadIdx.x; i < hd; i += blockDim.x) {
    float v = 0.0f;
#pragma unroll 4
    for (int s = 0; s < n_splits; ++s) v = fmaf(weight[s], acc[s * hd + i], v);
    out[head * hd + i] = total > 0.0f ? v / total : 0.0f;
  }
}

}  // namespace

const char* fast_attention_unsupported(const AttentionArgs& a, const float* q) {
  const KvLayerLayout& L = a.layout;
  const int hd = L.head_dim;
  if (hd != 64 && hd != 96 && hd != 128 && hd != 256) return "head_dim is not 64, 96, 128 or 256";
  if (L.n_kv_heads < 1 || a.n_heads < L.n_kv_heads || a.n_heads % L.n_kv_heads != 0) {
    return "the query heads are not a multiple of the KV heads";
  }
  if (a.n_splits < 1 || a.n_splits > kMaxFastSplits) return "not 1 to 4096 splits";
  if (a.tables.tail.shadows != nullptr) return "the exact tail's fp16 copies are read";
  const int groups = (hd + 31) / 32;     // symmetric formats: 32 values per group
  const int k4_groups = (hd + 15) / 16;  // offset-int4 keys: 16 (kv_k4_group_size)
  const int k_scales =
      L.k_dtype == KvDtype::F16 ? 0 : (L.k_dtype == KvDtype::Int8 ? groups : 2 * k4_groups);
  const int v_scales = L.v_dtype == KvDtype::F16 ? 0 : groups;
  if (L.k_stride != lane_bytes(L.k_dtype) * hd / 8 ||
      L.v_stride != lane_bytes(L.v_dtype) * hd / 8 || L.k_n_scales != k_scales ||
      L.v_n_scales != v_scales) {
    return "the layout's vector sizes are not kv_format.h's for this head_dim";
  }
  if ((L.k_dtype == KvDtype::Int8 && L.k_group != 32) ||
      (L.k_dtype == KvDtype::Int4 && L.k_group != 16) ||
      (L.v_dtype != KvDtype::F16 && L.v_group != 32)) {
    return "the quantization groups are not 32 values (16 for int4 keys)";
  }
  if (L.block_bytes <= 0 || L.block_bytes > (std::int64_t{1} << 30)) {
    return "a block is larger than 2^30 bytes";
  }
  if (!aligned(reinterpret_cast<std::uintptr_t>(a.tables.pool), 16) ||
      !aligned(L.block_bytes, 16)) {
    return "the pool or the block size is not 16-byte aligned";
  }
  if (!aligned(L.k_data, lane_bytes(L.k_dtype)) || !aligned(L.v_data, lane_bytes(L.v_dtype))) {
    return "a K or V data section is not aligned to its loads";
  }
  if (L.k_dtype == KvDtype::Int4 && (!aligned(L.k_scales, 4) || !aligned(L.k_offsets, 16))) {
    return "the offset-int4 scales or offsets are not aligned to their loads";
  }
  if (!aligned(reinterpret_cast<std::uintptr_t>(q), 16)) return "q is not 16-byte aligned";
  return nullptr;
}

void launch_fast_paged_attention(const AttentionArgs& a, const float* q, float* partial, float* out,
                                 cudaStream_t stream) {
  // Head tiles: all query heads of a KV head in one CTA up to 8 (then K and V are read once),
  // rounded up to a power of two (the spare heads are computed and dropped).
  const int group = a.n_heads / a.layout.n_kv_heads;
  const int g = std::min(group, 8);
  FastAttentionLaunch f;
  f.tile_heads = g <= 1 ? 1 : (g <= 2 ? 2 : (g <= 4 ? 4 : 8));
  f.n_tiles = (group + f.tile_heads - 1) / f.tile_heads;
  switch (a.layout.k_dtype) {
    case KvDtype::F16:
      launch_fast_attention_f16_keys(a, f, q, partial, out, stream);
      break;
    case KvDtype::Int8:
      launch_fast_attention_int8_keys(a, f, q, partial, out, stream);
      break;
    case KvDtype::Int4:
      launch_fast_attention_int4_keys(a, f, q, partial, out, stream);
      break;
  }
  KVSCOPE_CUDA_CHECK_LAUNCH();
  if (a.n_splits > 1) {
    const std::size_t smem = sizeof(float) * static_cast<std::size_t>(a.n_splits);
    launch_kernel(fast_merge_kernel,
                  dim3(static_cast<unsigned>(a.n_heads), static_cast<unsigned>(a.n_tokens)),
                  kMergeThreads, smem, stream, a.n_heads, a.n_splits, a.layout.head_dim, partial,
                  out);
    KVSCOPE_CUDA_CHECK_LAUNCH();
  }
}

}  // namespace kvscope::cuda
