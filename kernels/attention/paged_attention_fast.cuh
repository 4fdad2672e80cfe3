// The fast paged GQA decode attention kernel (chosen by paged_attention.cu for the layouts
// fast_attention_unsupported accepts): it streams K and V at memory bandwidth by keeping many
// wide loads in flight and no block-wide barrier in its main loop.
//
// CTA (KV head x head tile, token, split), 4 warps. A split is a range of whole blocks of the
// token's visible keys [first, pos]; its blocks are cut into chunks of CK = KPW * U slots,
// dealt to the warps round robin. A key is read by a team of P = head_dim / 8 lanes rounded
// up to a power of two (lane c of the team holds elements [8c, 8c + 8): one 16-byte load of
// fp16, 8 of int8, 4 of int4), so a warp reads KPW = 32 / P keys per load, and the U loads
// of a chunk per team are all issued before any is used.
//
// Per chunk, each warp on its own (no __syncthreads):
//   scores   lane partial dots q_h . k_u over its 8 elements (q pre-scaled, in registers),
//            summed over the team by a reduce-scatter (team_reduce_scatter) that leaves each
//            lane the full scores of a few (head, key) pairs of one head; masked keys -inf
//   softmax  online, per head, with one running max shared by the warp: the chunk's max
//            over the head's lanes, r = e^(m_old - m), p = e^(score - m); a lane adds its p
//            to its own share of l (summed over the warp at the end)
//   values   p and r go through shared memory (pbuf, rbuf) to every lane of the team, which
//            rescales its accumulators acc[h][8] and adds p * v.
// The warps' (m, l, acc) are merged at the end (write_split_result).
//
// Shared memory: static pbuf [warps][KPW][N + 4] and rbuf [warps][G]; dynamic
// fast_attention_smem_bytes(G, head_dim) for the merge.
//
// Instruction budget (PTX of the main loop, sm_90, G = 4, head_dim 128): about 85 warp
// instructions a key for fp16 K/V (512 bytes) and 100 for int8 (272 bytes), of which 32 are
// the q.k and p.v multiply-adds. A GPU with B bytes per SM clock and 4 issue slots stays
// memory-bound while instructions/key < 4 x bytes/key / B: an RTX 4090 (B about 3) is so for
// both, so int8 runs about 1.9x fp16; an H200 (B about 18) only for fp16, so int8 gains about
// 1.1x there. Beyond that the multiply-adds have to move to tensor cores (mma).
#pragma once

#include <cstddef>

#include "attention/paged_attention_lanes.cuh"
#include "attention/paged_attention_reduce.cuh"
#include "backend/cuda_launch.cuh"

namespace kvscope::cuda {

// How one launch of the fast kernel is laid out (computed on the host).
struct FastAttentionLaunch {
  int tile_heads = 1;  // G: query heads per CTA, 1, 2, 4 or 8
  int n_tiles = 1;     // CTAs per KV head, token and split: ceil(group / G)
};

inline std::size_t fast_attention_smem_bytes(int tile_heads, int head_dim) {
  const auto g = static_cast<std::size_t>(tile_heads);
  return sizeof(float) *
         (kFastWarps * g * static_cast<std::size_t>(head_dim) + kFastWarps * g * 3 + 2 * g);
}

// The layout's section offsets as int: every offset inside a block fits
// (fast_attention_unsupported requires block_bytes <= 2^30), and int arithmetic is cheaper.
struct BlockOffsets {
  int k_data, v_data, k_scales, v_scales, k_offsets;
};

__device__ inline BlockOffsets block_offsets(const KvLayerLayout& L) {
  return {static_cast<int>(L.k_data), static_cast<int>(L.v_data), static_cast<int>(L.k_scales),
          static_cast<int>(L.v_scales), static_cast<int>(L.k_offsets)};
}

// Where the token's split lies: blocks [b_lo, b_hi) of its table, keys [first, pos].
struct SplitRange {
  int first, pos, b_lo, b_hi;
  const int* table;
};

__device__ inline SplitRange split_range(const AttentionArgs& a) {
  const int t = blockIdx.y, split = blockIdx.z, bs = a.layout.block_size;
  SplitRange r;
  r.first = a.tables.first[t];
  r.pos = a.tables.pos[t];
  const int fb = r.first / bs, lb = r.pos / bs;
  // blocks spread evenly: split s takes [s n / S, (s + 1) n / S), so none is left empty
  // while another has two more than it (a ceil(n / S) share each would idle the last ones)
  const long long n_blocks = lb - fb + 1;
  r.b_lo = fb + static_cast<int>(split * n_blocks / a.n_splits);
  r.b_hi = fb + static_cast<int>((split + 1) * n_blocks / a.n_splits);
  r.table = a.tables.blocks + a.tables.table_start[t];
  return r;
}

// One instantiation: its shape (fast_attention_tile.h) and the lane vectors of its formats.
template <KvDtype KD_, KvDtype VD_, int G_, int HD_>
struct FastTile : FastShape<KD_, VD_, G_, HD_> {
  using KLane = LaneVector<k_lane_format(KD_)>;
  using VLane = LaneVector<v_lane_format(VD_)>;
};

// q [G][8] of the lane's elements of heads head0 .., pre-scaled (by scale / softcap with a
// soft-cap), and each head's sum over them (the m term of offset-int4 scores). Heads past
// n_here are zero.
template <class T>
__device__ __forceinline__ void load_query(const AttentionArgs& a, const float* q, int head0,
                                           int n_here, const LaneRole<T>& r, float (&qr)[T::G][8],
                                           float (&qsum)[T::G]) {
  const float* qt = q + (static_cast<std::int64_t>(blockIdx.y) * a.n_heads + head0) * T::HD;
  const float q_scale = a.softcap > 0.0f ? a.scale / a.softcap : a.scale;
#pragma unroll
  for (int h = 0; h < T::G; ++h) {
    float4 q0 = make_float4(0.f, 0.f, 0.f, 0.f), q1 = q0;
    if (r.active && h < n_here) {
      q0 = __ldg(reinterpret_cast<const float4*>(qt + h * T::HD + 8 * r.c));
      q1 = __ldg(reinterpret_cast<const float4*>(qt + h * T::HD + 8 * r.c) + 1);
    }
    const float v[8] = {q0.x, q0.y, q0.z, q0.w, q1.x, q1.y, q1.z, q1.w};
    qsum[h] = 0.0f;
#pragma unroll
    for (int e = 0; e < 8; ++e) qr[h][e] = v[e] * q_scale, qsum[h] += qr[h][e];
  }
}

// The team's U keys of a chunk, slots slot0 + u * KPW + s, all loads issued before any use;
// zero where the slot is not visible ([lo, hi)) or the lane holds no elements.
template <class T>
__device__ __forceinline__ void load_chunk(const std::uint8_t* base, const BlockOffsets& o,
                                           int vec0, int slot0, int lo, int hi,
                                           const LaneRole<T>& r, typename T::KLane (&kv)[T::U],
                                           typename T::VLane (&vv)[T::U]) {
  using Geo = typename T::Geo;
  const std::uint8_t* kd = base + o.k_data + vec0 * Geo::kKStride;
  const std::uint8_t* vd = base + o.v_data + vec0 * Geo::kVStride;
  const auto* ks = reinterpret_cast<const std::uint16_t*>(base + o.k_scales) + vec0 * Geo::kKScales;
  const auto* vs = reinterpret_cast<const std::uint16_t*>(base + o.v_scales) + vec0 * Geo::kVScales;
#pragma unroll
  for (int u = 0; u < T::U; ++u) {
    const int slot = slot0 + u * T::KPW + r.s;
    const bool ok = r.active && slot >= lo && slot < hi;
    kv[u].load(ok, kd + u * T::KPW * Geo::kKStride, ks + u * T::KPW * Geo::kKScales, r.c);
    vv[u].load(ok, vd + u * T::KPW * Geo::kVStride, vs + u * T::KPW * Geo::kVScales, r.c);
  }
}

// Offset-int4 keys: q_h . o over the lane's elements, the block's share of every score.
template <class T>
__device__ __forceinline__ void offset_terms(const std::uint8_t* lane_offsets, const LaneRole<T>& r,
                                             const float (&qr)[T::G][8], float (&qo)[T::G]) {
#pragma unroll
  for (int h = 0; h < T::G; ++h) qo[h] = 0.0f;
  if (!r.active) return;
  float off[8];
  f16x8_to_float(__ldg(reinterpret_cast<const uint4*>(lane_offsets)), off);
#pragma unroll
  for (int h = 0; h < T::G; ++h) {
#pragma unroll
    for (int e = 0; e < 8; ++e) qo[h] = fmaf(qr[h][e], off[e], qo[h]);
  }
}

// The lane's partial scores d[h * U + u] = q_h . k_u over its 8 elements (offset int4:
// s * (q . code) + m * sum q + q . o, kv_k4_dot's terms).
template <class T>
__device__ __forceinline__ void lane_scores(const typename T::KLane (&kv)[T::U],
                                            const float (&qr)[T::G][8], const float (&qsum)[T::G],
                                            const float (&qo)[T::G], float (&d)[T::N]) {
#pragma unroll
  for (int u = 0; u < T::U; ++u) {
    float x[8];
    kv[u].codes(x);
    const float kscale = kv[u].scale();
#pragma unroll
    for (int h = 0; h < T::G; ++h) {
      float dot = 0.0f;
#pragma unroll
      for (int e = 0; e < 8; ++e) dot = fmaf(qr[h][e], x[e], dot);
      if constexpr (T::KD == KvDtype::F16) {
        d[h * T::U + u] = dot;
      } else if constexpr (T::KD == KvDtype::Int8) {
        d[h * T::U + u] = kscale * dot;
      } else {
        d[h * T::U + u] = fmaf(kscale, dot, fmaf(kv[u].min(), qsum[h], qo[h]));
      }
    }
  }
}

// Online softmax of the chunk from the reduced scores d[0, VPL): the warp's running max of
// head hl moves to m, the lane's share of l is rescaled by r = e^(m_old - m) and adds the
// lane's p = e^(score - m) (owners only), and p of every (head, key) of each team and r of
// every head go to shared memory: rows [KPW][N + 4], rescale [G].
template <class T>
__device__ __forceinline__ void softmax_chunk(const float (&d)[T::N], int slot0, int lo, int hi,
                                              const LaneRole<T>& r, WarpSoftmax<T::G>& st,
                                              float (*rows)[T::N + 4], float* rescale) {
  float p[T::VPL], cmax = -INFINITY;
#pragma unroll
  for (int i = 0; i < T::VPL; ++i) {
    const int slot = slot0 + (r.u0 + i) * T::KPW + r.s;
    p[i] = slot >= lo && slot < hi ? d[i] : -INFINITY;
    cmax = fmaxf(cmax, p[i]);
  }
  const float m_new = fmaxf(st.m, warp_max_over<T::kShiftT, T::kUBits, ilog2(T::P)>(cmax));
  const float factor = expf(st.m - m_new);
  float psum = 0.0f;
#pragma unroll
  for (int i = 0; i < T::VPL; ++i) p[i] = expf(p[i] - m_new), psum += p[i];
  st.l = st.l * factor + (r.owner ? psum : 0.0f);
  st.m = m_new;
  __syncwarp();  // the previous chunk's reads of rows / rescale are done
  if (r.owner) {
#pragma unroll
    for (int i = 0; i < T::VPL; ++i) rows[r.s][r.n0 + i] = p[i];
  }
  if (r.writer) rescale[r.hl] = factor;
  __syncwarp();
}

// acc[h] = acc[h] * r_h + sum_u p_hu * v_u for the team's keys: p from its row [N], r from
// rescale [G]. r is 1 for every head once the running maxima settle; it is the same in all
// lanes, so skipping the rescale is a uniform branch.
template <class T>
__device__ __forceinline__ void accumulate_values(const typename T::VLane (&vv)[T::U],
                                                  const float* row, const float* rescale,
                                                  WarpSoftmax<T::G>& st) {
  float pw[T::N], rw[T::G];
#pragma unroll
  for (int i = 0; i < T::N; i += 4) {
    const float4 v = *reinterpret_cast<const float4*>(row + i);
    pw[i] = v.x, pw[i + 1] = v.y, pw[i + 2] = v.z, pw[i + 3] = v.w;
  }
  bool rescaled = false;
#pragma unroll
  for (int h = 0; h < T::G; ++h) rw[h] = rescale[h], rescaled |= rw[h] != 1.0f;
  if (rescaled) {
#pragma unroll
    for (int h = 0; h < T::G; ++h) {
#pragma unroll
      for (int e = 0; e < 8; ++e) st.acc[h][e] *= rw[h];
    }
  }
#pragma unroll
  for (int u = 0; u < T::U; ++u) {
    float x[8];
    vv[u].codes(x);
    const float vscale = vv[u].scale();
#pragma unroll
    for (int h = 0; h < T::G; ++h) {
      const float w = pw[h * T::U + u] * vscale;
#pragma unroll
      for (int e = 0; e < 8; ++e) st.acc[h][e] = fmaf(w, x[e], st.acc[h][e]);
    }
  }
}

// The warp's totals: l of head hl over its lanes (in the head's owners), acc over the teams.
template <class T>
__device__ __forceinline__ void finish_warp(WarpSoftmax<T::G>& st) {
  st.l = warp_sum_over<T::kShiftT, T::kUBits, ilog2(T::P)>(st.l);
#pragma unroll
  for (int team = T::P; team < kWarp; team *= 2) {
#pragma unroll
    for (int h = 0; h < T::G; ++h) {
#pragma unroll
      for (int e = 0; e < 8; ++e) {
        st.acc[h][e] += __shfl_xor_sync(0xffffffffu, st.acc[h][e], team);
      }
    }
  }
}

template <KvDtype KD, KvDtype VD, int G, int HD>
__global__ void __launch_bounds__(kFastThreads, fast_min_ctas(G))
    fast_attention_kernel(AttentionArgs a, int n_tiles, const float* __restrict__ q,
                          float* __restrict__ partial, float* __restrict__ out) {
  using T = FastTile<KD, VD, G, HD>;
  __shared__ __align__(16) float rows[kFastWarps][T::KPW][T::N + 4];  // p of each team
  __shared__ float rescale[kFastWarps][G];
  KVSCOPE_DYNAMIC_SHARED(float, merge_smem);
  const LaneRole<T> role(static_cast<int>(threadIdx.x));
  const KvLayerLayout& L = a.layout;
  const int bs = L.block_size, group = a.n_heads / L.n_kv_heads;
  const int kv_head = blockIdx.x / n_tiles, h0 = (blockIdx.x % n_tiles) * G;
  const int n_here = min(G, group - h0);
  float qr[G][8], qsum[G];
  load_query<T>(a, q, kv_head * group + h0, n_here, role, qr, qsum);
  WarpSoftmax<G> st;

  // chunk (b, j): slots [j * CK, j * CK + CK) of block b; warp w takes chunks w, w + 4, ..
  const SplitRange r = split_range(a);
  const BlockOffsets o = block_offsets(L);
  const int cpb = (bs + T::CK - 1) / T::CK;  // chunks per block
  int b = r.b_lo + role.warp / cpb, j = role.warp % cpb;
  int blk = b < r.b_hi ? __ldg(r.table + b) : 0;
  while (b < r.b_hi) {  // uniform over the warp
    int nb = b + kFastWarps / cpb, nj = j + kFastWarps % cpb;
    if (nj >= cpb) nj -= cpb, ++nb;
    const int next_blk = nb < r.b_hi ? __ldg(r.table + nb) : 0;  // in flight with this chunk
    const std::uint8_t* base = a.tables.pool + static_cast<std::int64_t>(blk) * L.block_bytes;
    const int slot0 = j * T::CK, key0 = b * bs;
    const int lo = max(0, r.first - key0), hi = min(bs, r.pos - key0 + 1);  // visible slots
    typename T::KLane kv[T::U];
    typename T::VLane vv[T::U];
    load_chunk<T>(base, o, kv_head * bs + slot0 + role.s, slot0, lo, hi, role, kv, vv);
    float qo[G], d[T::N];
    if constexpr (KD == KvDtype::Int4) {
      offset_terms<T>(base + o.k_offsets + kv_head * HD * 2 + 16 * role.c, role, qr, qo);
    } else {
#pragma unroll
      for (int h = 0; h < G; ++h) qo[h] = 0.0f;
    }
    lane_scores<T>(kv, qr, qsum, qo, d);
    team_reduce_scatter<T::P / 2, T::N>(d, role.c, ShflXor{});
    if (a.softcap > 0.0f) {  // Gemma 2: q carries scale / softcap
#pragma unroll
      for (int i = 0; i < T::VPL; ++i) d[i] = a.softcap * tanhf(d[i]);
    }
    softmax_chunk<T>(d, slot0, lo, hi, role, st, rows[role.warp], rescale[role.warp]);
    accumulate_values<T>(vv, rows[role.warp][role.s], rescale[role.warp], st);
    b = nb, j = nj, blk = next_blk;
  }
  finish_warp<T>(st);
  write_split_result<G>(a, st, merge_smem, kv_head, h0, n_here, role.writer, role.hl, role.c,
                        role.s == 0 && role.active, partial, out);
}

// Launches fast_attention_kernel<KD, VD, G, HD> for the launch's head_dim.
template <KvDtype KD, KvDtype VD, int G>
void launch_fast_attention_hd(const AttentionArgs& a, const FastAttentionLaunch& f, const float* q,
                              float* partial, float* out, cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>(a.layout.n_kv_heads * f.n_tiles),
                  static_cast<unsigned>(a.n_tokens), static_cast<unsigned>(a.n_splits));
  const std::size_t smem = fast_attention_smem_bytes(G, a.layout.head_dim);
  switch (a.layout.head_dim) {
    case 64:
      launch_kernel(fast_attention_kernel<KD, VD, G, 64>, grid, kFastThreads, smem, stream, a,
                    f.n_tiles, q, partial, out);
      break;
    case 96:
      launch_kernel(fast_attention_kernel<KD, VD, G, 96>, grid, kFastThreads, smem, stream, a,
                    f.n_tiles, q, partial, out);
      break;
    case 128:
      launch_kernel(fast_attention_kernel<KD, VD, G, 128>, grid, kFastThreads, smem, stream, a,
                    f.n_tiles, q, partial, out);
      break;
    default:  // 256
      launch_kernel(fast_attention_kernel<KD, VD, G, 256>, grid, kFastThreads, smem, stream, a,
                    f.n_tiles, q, partial, out);
      break;
  }
}

template <KvDtype KD, KvDtype VD>
void launch_fast_attention_tile(const AttentionArgs& a, const FastAttentionLaunch& f,
                                const float* q, float* partial, float* out, cudaStream_t stream) {
  switch (f.tile_heads) {
    case 1:
      return launch_fast_attention_hd<KD, VD, 1>(a, f, q, partial, out, stream);
    case 2:
      return launch_fast_attention_hd<KD, VD, 2>(a, f, q, partial, out, stream);
    case 4:
      return launch_fast_attention_hd<KD, VD, 4>(a, f, q, partial, out, stream);
    default:
      return launch_fast_attention_hd<KD, VD, 8>(a, f, q, partial, out, stream);
  }
}

// Every V dtype, tile and head_dim of one K dtype; paged_attention_fast_k_*.cu each
// instantiate one K dtype (48 kernels each, so the K dtypes compile in parallel).
template <KvDtype KD>
void launch_fast_attention_for_k(const AttentionArgs& a, const FastAttentionLaunch& f,
                                 const float* q, float* partial, float* out, cudaStream_t stream) {
  switch (a.layout.v_dtype) {
    case KvDtype::F16:
      return launch_fast_attention_tile<KD, KvDtype::F16>(a, f, q, partial, out, stream);
    case KvDtype::Int8:
      return launch_fast_attention_tile<KD, KvDtype::Int8>(a, f, q, partial, out, stream);
    case KvDtype::Int4:
      return launch_fast_attention_tile<KD, KvDtype::Int4>(a, f, q, partial, out, stream);
  }
}

// The instantiations (paged_attention_fast_k_f16.cu, _k_int8.cu, _k_int4.cu).
void launch_fast_attention_f16_keys(const AttentionArgs& a, const FastAttentionLaunch& f,
                                    const float* q, float* partial, float* out,
                                    cudaStream_t stream);
void launch_fast_attention_int8_keys(const AttentionArgs& a, const FastAttentionLaunch& f,
                                     const float* q, float* partial, float* out,
                                     cudaStream_t stream);
void launch_fast_attention_int4_keys(const AttentionArgs& a, const FastAttentionLaunch& f,
                                     const float* q, float* partial, float* out,
                                     cudaStream_t stream);

}  // namespace kvscope::cuda
