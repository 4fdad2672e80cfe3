// Paged GQA attention reading the quantized KV pool in place: the launchers, the choice
// between the fast decode kernel (paged_attention_fast.cuh, for the layouts it supports) and
// the generic kernel below, which runs every layout and is the tested fallback
// (KVSCOPE_ATTENTION_KERNEL=generic forces it).
//
// The generic kernel:
// It also reads a group's exact tail (kv/exact_tail.h): a block the token reads exactly and
// that has an fp16 copy is read from the copy, through the copy's layout.
// CTA (kv_head x head tile, token, split): the query heads that share kv_head are served
// together, a tile of them per CTA (all of them unless their shared memory would pass the
// device's limit: generic_attention_tiling), so every K and V byte of the token's visible
// keys is read once per tile. The
// keys [first, pos] are cut into n_splits ranges (blockIdx.z); each CTA walks its range
// block by block with an online softmax (running max m and sum l per head), and a merge
// kernel combines the splits:  out = sum_s e^(m_s - M) acc_s / sum_s e^(m_s - M) l_s.
// With one split the CTA writes the normalised output itself.
//
// Shared memory per CTA (floats): q [tile][head_dim] (pre-scaled), acc [tile][head_dim],
// p [tile][block_size] (scores, then weights), m, l, rescale [tile].
#include <algorithm>
#include <cfloat>
#include <cstdlib>
#include <cstring>
#include <string>

#include "attention/paged_attention_choice.cuh"
#include "backend/cuda_check.h"
#include "backend/cuda_launch.cuh"
#include "ops/device_math.cuh"

namespace kvscope::cuda {

namespace {

constexpr int kThreads = 128;
constexpr int kWarps = kThreads / kWarp;
constexpr int kMaxLaneElems = 8;  // head_dim <= 256: a lane holds 8 elements of one key

struct Smem {
  float* q;
  float* acc;
  float* p;
  float* m;
  float* l;
  float* rescale;
};

__device__ inline Smem carve(float* base, int group, int hd, int bs) {
  Smem s;
  s.q = base;
  s.acc = s.q + group * hd;
  s.p = s.acc + group * hd;
  s.m = s.p + group * bs;
  s.l = s.m + group;
  s.rescale = s.l + group;
  return s;
}

// p[h][slot] = q_h . k_slot for slots [s0, s1]: a warp per key, the key dequantized once
// into registers (Int4 keys through the block's offsets) and dotted with every head of the
// group.
__device__ void block_scores(const KvLayerLayout& L, const std::uint8_t* base, int kv_head, int s0,
                             int s1, int group, float softcap, const Smem& s) {
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  const int hd = L.head_dim, G = L.k_group;
  const auto* offsets = reinterpret_cast<const std::uint16_t*>(
      base + L.k_offsets + static_cast<std::int64_t>(kv_head) * hd * 2);
  for (int slot = s0 + warp; slot <= s1; slot += kWarps) {
    const std::int64_t vec = static_cast<std::int64_t>(kv_head) * L.block_size + slot;
    const std::uint8_t* data = base + L.k_data + vec * L.k_stride;
    const auto* sc =
        reinterpret_cast<const std::uint16_t*>(base + L.k_scales + vec * 2 * L.k_n_scales);
    float kr[kMaxLaneElems];
#pragma unroll
    for (int j = 0; j < kMaxLaneElems; ++j) {
      const int i = lane + j * kWarp;
      kr[j] = i < hd ? kv_key_element(L.k_dtype, data, sc, offsets, i, G) : 0.0f;
    }
    for (int h = 0; h < group; ++h) {
      float d = 0.0f;
#pragma unroll
      for (int j = 0; j < kMaxLaneElems; ++j) {
        const int i = lane + j * kWarp;
        if (i < hd) d += s.q[h * hd + i] * kr[j];
      }
      d = warp_sum(d);
      if (softcap > 0.0f) d = softcap * tanhf(d);  // q carries scale / softcap
      if (lane == 0) s.p[h * L.block_size + slot] = d;
    }
  }
}

// Online softmax update for slots [s0, s1]: a warp per head turns scores into weights
// e^(score - m_new) and records the factor e^(m_old - m_new) the accumulator is scaled by.
__device__ void block_softmax(int bs, int s0, int s1, int group, const Smem& s) {
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  for (int h = warp; h < group; h += kWarps) {
    float* p = s.p + h * bs;
    float mx = -FLT_MAX;
    for (int slot = s0 + lane; slot <= s1; slot += kWarp) mx = fmaxf(mx, p[slot]);
    mx = fmaxf(warp_max(mx), s.m[h]);
    float sum = 0.0f;
    for (int slot = s0 + lane; slot <= s1; slot += kWarp) {
      p[slot] = expf(p[slot] - mx);
      sum += p[slot];
    }
    sum = warp_sum(sum);
    if (lane == 0) {
      const float r = expf(s.m[h] - mx);  // m starts at -FLT_MAX: e^(-huge) = 0
      s.rescale[h] = r;
      s.l[h] = s.l[h] * r + sum;
      s.m[h] = mx;
    }
  }
}

// acc[h][i] = acc[h][i] * rescale[h] + sum_slot p[h][slot] * v_slot[i]: a thread per
// dimension i, each V element dequantized once for all heads.
__device__ void block_values(const KvLayerLayout& L, const std::uint8_t* base, int kv_head, int s0,
                             int s1, int group, const Smem& s) {
  const int hd = L.head_dim, G = L.v_group, bs = L.block_size;
  for (int i = threadIdx.x; i < hd; i += blockDim.x) {
    for (int h = 0; h < group; ++h) s.acc[h * hd + i] *= s.rescale[h];
    for (int slot = s0; slot <= s1; ++slot) {
      const std::int64_t vec = static_cast<std::int64_t>(kv_head) * bs + slot;
      const auto* sc =
          reinterpret_cast<const std::uint16_t*>(base + L.v_scales + vec * 2 * L.v_n_scales);
      const float v = kv_element(L.v_dtype, base + L.v_data + vec * L.v_stride, sc, i, G);
      for (int h = 0; h < group; ++h) s.acc[h * hd + i] += s.p[h * bs + slot] * v;
    }
  }
}

// blockIdx.x = kv_head * n_tiles + tile: the tile's query heads [h0, h0 + heads) of the
// kv_head's group, shared memory carved for tile_heads.
__global__ void attention_kernel(AttentionArgs a, int tile_heads, int n_tiles, const float* q,
                                 float* partial, float* out) {
  KVSCOPE_DYNAMIC_SHARED(float, smem);
  const KvLayerLayout& L = a.layout;
  const int kv_head = blockIdx.x / n_tiles, tile = blockIdx.x % n_tiles;
  const int t = blockIdx.y, split = blockIdx.z;
  const int group = a.n_heads / L.n_kv_heads, hd = L.head_dim, bs = L.block_size;
  const int h0 = kv_head * group + tile * tile_heads;            // the tile's first query head
  const int heads = min(tile_heads, group - tile * tile_heads);  // and how many it has
  const Smem s = carve(smem, tile_heads, hd, bs);
  const float* qt = q + (static_cast<std::int64_t>(t) * a.n_heads + h0) * hd;
  const float q_scale = a.softcap > 0.0f ? a.scale / a.softcap : a.scale;
  for (int i = threadIdx.x; i < heads * hd; i += blockDim.x) {
    s.q[i] = qt[i] * q_scale;
    s.acc[i] = 0.0f;
  }
  for (int h = threadIdx.x; h < heads; h += blockDim.x) s.m[h] = -FLT_MAX, s.l[h] = 0.0f;
  __syncthreads();

  const int pos = a.tables.pos[t], first = a.tables.first[t];
  const int per = (pos - first + a.n_splits) / a.n_splits;          // ceil(n_keys / n_splits)
  const int lo = first + split * per, hi = min(lo + per, pos + 1);  // keys [lo, hi)
  const int* table = a.tables.blocks + a.tables.table_start[t];
  const KvTailTables& tail = a.tables.tail;
  for (int b = lo / bs; lo < hi && b <= (hi - 1) / bs; ++b) {
    // the block's exact-tail copy when it has one and the token reads it exactly
    const int shadow = tail.shadows != nullptr && b > pos / bs - tail.tail_blocks
                           ? tail.shadows[a.tables.table_start[t] + b]
                           : -1;
    const KvLayerLayout& BL = shadow >= 0 ? tail.layout : L;
    const std::uint8_t* base =
        shadow >= 0 ? tail.pool + static_cast<std::int64_t>(shadow) * BL.block_bytes
                    : a.tables.pool + static_cast<std::int64_t>(table[b]) * L.block_bytes;
    const int s0 = max(lo, b * bs) - b * bs, s1 = min(hi - 1, b * bs + bs - 1) - b * bs;
    block_scores(BL, base, kv_head, s0, s1, heads, a.softcap, s);
    __syncthreads();
    block_softmax(bs, s0, s1, heads, s);
    __syncthreads();
    block_values(BL, base, kv_head, s0, s1, heads, s);
    __syncthreads();
  }

  for (int i = threadIdx.x; i < heads * hd; i += blockDim.x) {
    const int h = i / hd;
    const std::int64_t head = static_cast<std::int64_t>(t) * a.n_heads + h0 + h;
    if (a.n_splits == 1) {
      out[head * hd + i % hd] = s.l[h] > 0.0f ? s.acc[i] / s.l[h] : 0.0f;
    } else {
      partial[(head * a.n_splits + split) * hd + i % hd] = s.acc[i];
    }
  }
  if (a.n_splits > 1) {
    // [n_tokens][n_heads][n_splits][hd] accumulators, then [..][n_splits][2] (m, l)
    float* ml = partial + static_cast<std::int64_t>(gridDim.y) * a.n_heads * a.n_splits * hd;
    for (int h = threadIdx.x; h < heads; h += blockDim.x) {
      const std::int64_t head = static_cast<std::int64_t>(t) * a.n_heads + h0 + h;
      ml[(head * a.n_splits + split) * 2] = s.m[h];
      ml[(head * a.n_splits + split) * 2 + 1] = s.l[h];
    }
  }
}

// grid: (n_heads, n_tokens); threads over head_dim. The log-sum-exp merge of the splits.
__global__ void merge_kernel(int n_heads, int n_splits, int hd, const float* partial, float* out) {
  const std::int64_t head = static_cast<std::int64_t>(blockIdx.y) * n_heads + blockIdx.x;
  const float* ml = partial + static_cast<std::int64_t>(gridDim.y) * n_heads * n_splits * hd +
                    head * n_splits * 2;
  float mx = -FLT_MAX;
  for (int s = 0; s < n_splits; ++s) {
    if (ml[2 * s + 1] > 0.0f) mx = fmaxf(mx, ml[2 * s]);
  }
  float total = 0.0f;
  for (int s = 0; s < n_splits; ++s) {
    if (ml[2 * s + 1] > 0.0f) total += expf(ml[2 * s] - mx) * ml[2 * s + 1];
  }
  for (int i = threadIdx.x; i < hd; i += blockDim.x) {
    float v = 0.0f;
    for (int s = 0; s < n_splits; ++s) {
      if (ml[2 * s + 1] > 0.0f) v += expf(ml[2 * s] - mx) * partial[(head * n_splits + s) * hd + i];
    }
    out[head * hd + i] = total > 0.0f ? v / total : 0.0f;
  }
}

}  // namespace

namespace {

// The shape checks every kernel relies on.
void check_attention_args(const AttentionArgs& a) {
  const KvLayerLayout& L = a.layout;
  if (L.head_dim < 1 || L.head_dim > kWarp * kMaxLaneElems || L.n_kv_heads <= 0 ||
      a.n_heads % L.n_kv_heads != 0 || a.n_splits < 1) {
    throw_usage_error("paged attention: head_dim " + std::to_string(L.head_dim) + " (at most " +
                      std::to_string(kWarp * kMaxLaneElems) + "), " + std::to_string(a.n_heads) +
                      " heads over " + std::to_string(L.n_kv_heads) + " KV heads, " +
                      std::to_string(a.n_splits) + " splits");
  }
}

void launch_generic_paged_attention(const AttentionArgs& a, const float* q, float* partial,
                                    float* out, cudaStream_t stream) {
  const KvLayerLayout& L = a.layout;
  const int group = a.n_heads / L.n_kv_heads;
  const std::size_t limit = device_shared_memory_limit();
  const GenericAttentionTiling tiling =
      generic_attention_tiling(group, L.head_dim, L.block_size, limit);
  if (tiling.tile_heads == 0) {
    throw_usage_error("paged attention: one query head at head_dim " + std::to_string(L.head_dim) +
                      " and block size " + std::to_string(L.block_size) + " needs " +
                      std::to_string(generic_attention_smem_bytes(1, L.head_dim, L.block_size)) +
                      " bytes of shared memory; this device allows " + std::to_string(limit) +
                      " a CTA (use a smaller block size)");
  }
  KVSCOPE_CUDA_CHECK(cudaFuncSetAttribute(attention_kernel,
                                          cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          static_cast<int>(tiling.smem_bytes)));
  const dim3 grid(static_cast<unsigned>(L.n_kv_heads * tiling.n_tiles),
                  static_cast<unsigned>(a.n_tokens), static_cast<unsigned>(a.n_splits));
  launch_kernel(attention_kernel, grid, kThreads, tiling.smem_bytes, stream, a, tiling.tile_heads,
                tiling.n_tiles, q, partial, out);
  KVSCOPE_CUDA_CHECK_LAUNCH();
  if (a.n_splits > 1) {
    launch_kernel(merge_kernel,
                  dim3(static_cast<unsigned>(a.n_heads), static_cast<unsigned>(a.n_tokens)),
                  kThreads, 0, stream, a.n_heads, a.n_splits, L.head_dim, partial, out);
    KVSCOPE_CUDA_CHECK_LAUNCH();
  }
}

}  // namespace

// KVSCOPE_ATTENTION_KERNEL=generic, read once per process: the switch that lets a GPU
// session compare the kernels, or fall back if the fast one misbehaves.
bool attention_generic_forced() {
  static const bool forced = [] {
    const char* v = std::getenv("KVSCOPE_ATTENTION_KERNEL");
    return v != nullptr && std::strcmp(v, "generic") == 0;
  }();
  return forced;
}

const char* attention_kernel_name(AttentionKernel kernel) {
  return kernel == AttentionKernel::Fast ? "fast" : "generic";
}

AttentionKernel chosen_attention_kernel(const AttentionArgs& args, const float* q) {
  if (attention_generic_forced() || fast_attention_unsupported(args, q) != nullptr) {
    return AttentionKernel::Generic;
  }
  return AttentionKernel::Fast;
}

void launch_paged_attention_with(AttentionKernel kernel, const AttentionArgs& args, const float* q,
                                 float* partial, float* out, cudaStream_t stream) {
  if (args.n_tokens <= 0) return;
  check_attention_args(args);
  if (kernel == AttentionKernel::Generic) {
    launch_generic_paged_attention(args, q, partial, out, stream);
    return;
  }
  if (const char* why = fast_attention_unsupported(args, q)) {
    throw_usage_error(std::string("paged attention: the fast kernel cannot run this layout: ") +
                      why);
  }
  launch_fast_paged_attention(args, q, partial, out, stream);
}

void launch_paged_attention(const AttentionArgs& a, const float* q, float* partial, float* out,
                            cudaStream_t stream) {
  if (a.n_tokens <= 0) return;
  check_attention_args(a);
  launch_paged_attention_with(chosen_attention_kernel(a, q), a, q, partial, out, stream);
}

}  // namespace kvscope::cuda
