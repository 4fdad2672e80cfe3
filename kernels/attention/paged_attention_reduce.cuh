// Warp and CTA reductions of the fast paged attention path (paged_attention_fast.cuh).
#pragma once

#include <cfloat>

#include "attention/fast_attention_tile.h"
#include "ops/device_math.cuh"

namespace kvscope::cuda {

// The warp's shuffle and the combining operations for fast_attention_tile.h's reductions.
struct ShflXor {
  KVSCOPE_HD float operator()(float v, int o) const {
#if defined(__CUDA_ARCH__)
    return __shfl_xor_sync(0xffffffffu, v, o);
#else
    (void)o;
    return v;  // never called on the host: the CPU tests pass their own exchange
#endif
  }
};
struct MaxOf {
  KVSCOPE_HD float operator()(float a, float b) const { return fmaxf(a, b); }
};
struct SumOf {
  KVSCOPE_HD float operator()(float a, float b) const { return a + b; }
};

// Max / sum of v over the lanes that differ in the lane-index bits [Lo, Lo + Bits) and in
// the bits from TeamBit up (the other key teams of the warp).
template <int Lo, int Bits, int TeamBit>
__device__ __forceinline__ float warp_max_over(float v) {
  return combine_over<Lo, Bits, TeamBit>(v, ShflXor{}, MaxOf{});
}
template <int Lo, int Bits, int TeamBit>
__device__ __forceinline__ float warp_sum_over(float v) {
  return combine_over<Lo, Bits, TeamBit>(v, ShflXor{}, SumOf{});
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
