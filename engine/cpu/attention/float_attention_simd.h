// Inside float attention (float_attention.h): the scalar pieces every version shares and the
// table of SIMD functions each x86 instruction set provides (float_attention_x86.h, compiled
// as float_attention_avx2.cpp and float_attention_avx.cpp). Only those files and
// float_attention.cpp include it.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>

#include "cpu/attention/float_attention.h"
#include "kv/format/kv_format.h"

namespace kvscope::float_attention_detail {

constexpr std::int64_t kLanes = kFloatAttentionLanes;

// e^x = 2^n e^r with n = round(x log2 e), r = x - n ln 2 (ln 2 in two parts, so r is exact
// enough) and e^r from Cephes' degree-6 polynomial for |r| <= ln 2 / 2.
constexpr float kExpLo = -87.33654f;  // 2^n stays a normal float: n >= -126
constexpr float kExpHi = 88.37626f;   // n <= 127
constexpr float kLog2e = 1.44269504088896341f;
constexpr float kLn2Hi = 0.693359375f;
constexpr float kLn2Lo = -2.12194440e-4f;
constexpr float kExpPoly[6] = {1.9875691500e-4f, 1.3981999507e-3f, 8.3334519073e-3f,
                               4.1665795894e-2f, 1.6666665459e-1f, 5.0000001201e-1f};

// One lane of the vector exponential (std::fma where the vector one fuses).
inline float exp_lane(float x) {
  x = x < kExpHi ? x : kExpHi;  // _mm256_min_ps(x, hi)
  x = x > kExpLo ? x : kExpLo;  // _mm256_max_ps(x, lo)
  const float n = std::nearbyint(x * kLog2e);
  float r = std::fma(n, -kLn2Hi, x);
  r = std::fma(n, -kLn2Lo, r);
  float p = kExpPoly[0];
  for (int i = 1; i < 6; ++i) p = std::fma(p, r, kExpPoly[i]);
  p = std::fma(p, r * r, r) + 1.0f;
  return p * std::bit_cast<float>((static_cast<std::int32_t>(n) + 127) << 23);
}

// Raises head h's running max to at least `block_max`, re-weighing what it holds.
inline void raise_max(FloatAttentionState& st, std::int64_t h, float block_max) {
  if (!(block_max > st.max[h])) return;
  if (!st.empty(h)) {
    const float r = exp_lane(st.max[h] - block_max);
    float* a = &st.acc[h * st.row];
    for (std::int64_t i = 0; i < st.row; ++i) a[i] *= r;
    st.sum[h] *= r;
  }
  st.max[h] = block_max;
}

// s[j] = softcap * tanh(s[j] / softcap) for j < n (Gemma 2's scores); softcap 0: unchanged.
// Scalar in every version, so the versions keep giving the same bits.
inline void soft_cap(float* s, std::int64_t n, float softcap) {
  if (softcap == 0.0f) return;
  const float inv = 1.0f / softcap;
  for (std::int64_t j = 0; j < n; ++j) s[j] = softcap * std::tanh(s[j] * inv);
}

inline float max_of(const float* s, std::int64_t n) {
  float m = s[0];
  for (std::int64_t j = 1; j < n; ++j) m = s[j] > m ? s[j] : m;
  return m;
}

// The functions an instruction set speeds up (float_attention.cpp's portable ones, 8 lanes
// at a time).
struct SimdTable {
  // float_attention_keys for a non-empty run.
  void (*keys)(const float* q, const float* k, const float* v, std::int64_t n_keys,
               FloatAttentionState& st, float* scores, const KeyTerms* terms, float softcap);
  // acc[h] = from.acc[h] * rf + into.acc[h] * ri
  void (*merge)(FloatAttentionState& into, const FloatAttentionState& from, std::int64_t h,
                float ri, float rf);
  void (*rows_from_f16)(const std::uint16_t* src, std::int64_t stride, std::int64_t n,
                        std::int64_t hd, std::int64_t row, float* dst);
  // float_attention_rows_from_quantized for a group size that is a multiple of 8.
  void (*rows_from_quantized)(KvSide side, KvDtype dtype, const std::uint8_t* data,
                              std::int64_t data_stride, const std::uint16_t* scales,
                              std::int64_t scales_stride, std::int64_t n, std::int64_t hd,
                              std::int64_t row, float* out, float* key_terms);
  // w[j] = e^(w[j] - m), j < n
  void (*exp_shifted)(float* w, std::int64_t n, float m);
};

// AVX2 + FMA + F16C: the portable functions' bits. AVX alone (no FMA): a multiply and an add
// where those fuse, so other bits. nullptr where not compiled in (non-x86 builds).
const SimdTable* avx2_table();
const SimdTable* avx_table();

}  // namespace kvscope::float_attention_detail
