// Warp and CTA reductions of the fast paged attention path (paged_attention_fast.cuh).
#pragma once

#include <cfloat>

#include "ops/device_math.cuh"

namespace kvscope::cuda {

inline constexpr int kFastWarps = 4;  // warps per CTA of the fast kernel
inline constexpr int kFastThreads = kFastWarps * kWarp;

constexpr int ilog2(int n) {
  return n <= 1 ? 0 : 1 + ilog2(n / 2);
}

// Sums v[0, Count) over each aligned team of P lanes while scattering the sums: every xor
// step lane pairs swap halves of what they hold and keep one half each (lanes with bit O of
// the team index c set keep the upper half), so Count values cost Count - 1 shuffles instead
// of Count * log2(P). When Count reaches 1 before O does, the remaining steps are plain
// butterfly sums. Afterwards v[0, max(1, N / P)) holds the team's sums of the indices
// (c >> (log2 P - S)) * (N >> S) + i, S = min(log2 P, log2 N): team lanes that differ only
// in their low log2 P - S bits hold copies.
template <int O, int Count, int N>
__device__ __forceinline__ void team_reduce_scatter(float (&v)[N], int c) {
  if constexpr (O >= 1) {
    if constexpr (Count > 1) {
      constexpr int kHalf = Count / 2;
      const bool upper = (c & O) != 0;
#pragma unroll
      for (int i = 0; i < kHalf; ++i) {
        const float send = upper ? v[i] : v[i + kHalf];
        const float keep = upper ? v[i + kHalf] : v[i];
        v[i] = keep + __shfl_xor_sync(0xffffffffu, send, O);
      }
      team_reduce_scatter<O / 2, kHalf>(v, c);
    } else {
      v[0] += __shfl_xor_sync(0xffffffffu, v[0], O);
      team_reduce_scatter<O / 2, 1>(v, c);
    }
  }
}

// Max / sum of v over the lanes that differ in the lane-index bits [Lo, Lo + Bits) and in
// the bits from TeamBit up (the other key teams of the warp).
template <int Lo, int Bits, int TeamBit>
__device__ __forceinline__ float warp_max_over(float v) {
#pragma unroll
  for (int k = 0; k < Bits; ++k) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 1 << (Lo + k)));
#pragma unroll
  for (int o = 1 << TeamBit; o < kWarp; o *= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}
template <int Lo, int Bits, int TeamBit>
__device__ __forceinline__ float warp_sum_over(float v) {
#pragma unroll
  for (int k = 0; k < Bits; ++k) v += __shfl_xor_sync(0xffffffffu, v, 1 << (Lo + k));
#pragma unroll
  for (int o = 1 << TeamBit; o < kWarp; o *= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

// One warp's running state: accumulators of its G heads for the lane's 8 elements, and the
// running max and the lane's share of the sum for head hl, the head whose scores it holds.
template <int G>
struct WarpSoftmax {
  float acc[G][8] = {};
  float m = -FLT_MAX;  // e^(-FLT_MAX - m) = 0: the first chunk's rescale clears nothing real
  float l = 0.0f;
};

// The split's merged result: out (one split) or the partial accumulators and (m, l).
template <int G>
__device__ void write_split_result(const AttentionArgs& a, const WarpSoftmax<G>& st, float* smem,
                                   int kv_head, int h0, int n_here, bool writes_ml, int hl, int c,
                                   bool team0_active, float* partial, float* out) {
  const int hd = a.layout.head_dim, warp = threadIdx.x / kWarp;
  const int group = a.n_heads / a.layout.n_kv_heads;
  float* accs = smem;                       // [warps][G][hd]
  float* mls = accs + kFastWarps * G * hd;  // [warps][G][2]
  float* fac = mls + kFastWarps * G * 2;    // [warps][G]
  float* tot = fac + kFastWarps * G;        // [G][2]
  if (team0_active) {
#pragma unroll
    for (int h = 0; h < G; ++h) {
      auto* dst = reinterpret_cast<float4*>(accs + (warp * G + h) * hd + 8 * c);
      dst[0] = make_float4(st.acc[h][0], st.acc[h][1], st.acc[h][2], st.acc[h][3]);
      dst[1] = make_float4(st.acc[h][4], st.acc[h][5], st.acc[h][6], st.acc[h][7]);
    }
  }
  if (writes_ml) {
    mls[(warp * G + hl) * 2] = st.m;
    mls[(warp * G + hl) * 2 + 1] = st.l;
  }
  __syncthreads();
  if (threadIdx.x < G) {
    const int h = threadIdx.x;
    float mx = -FLT_MAX;
    for (int w = 0; w < kFastWarps; ++w) mx = fmaxf(mx, mls[(w * G + h) * 2]);
    float sum = 0.0f;
    for (int w = 0; w < kFastWarps; ++w) {
      const float f = expf(mls[(w * G + h) * 2] - mx);
      fac[w * G + h] = f;
      sum += f * mls[(w * G + h) * 2 + 1];
    }
    tot[2 * h] = mx;
    tot[2 * h + 1] = sum;
  }
  __syncthreads();
  const int t = blockIdx.y, split = blockIdx.z;
  for (int idx = threadIdx.x; idx < n_here * hd; idx += blockDim.x) {
    const int h = idx / hd, i = idx % hd;
    float v = 0.0f;
    for (int w = 0; w < kFastWarps; ++w) v += fac[w * G + h] * accs[(w * G + h) * hd + i];
    const std::int64_t head = static_cast<std::int64_t>(t) * a.n_heads + kv_head * group + h0 + h;
    if (a.n_splits == 1) {
      out[head * hd + i] = tot[2 * h + 1] > 0.0f ? v / tot[2 * h + 1] : 0.0f;
      continue;
    }
    // [n_tokens][n_heads][n_splits][hd] accumulators, then [..][n_splits][2] (m, l)
    partial[(head * a.n_splits + split) * hd + i] = v;
    if (i == 0) {
      float* ml = partial + static_cast<std::int64_t>(gridDim.y) * a.n_heads * a.n_splits * hd;
      ml[(head * a.n_splits + split) * 2] = tot[2 * h];
      ml[(head * a.n_splits + split) * 2 + 1] = tot[2 * h + 1];
    }
  }
}

}  // namespace kvscope::cuda
