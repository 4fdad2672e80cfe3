#include "cpu/float_attention.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#include "cpu/simd_dispatch.h"
#include "util/half.h"

// The portable functions spell out, lane by lane, the operations the AVX2 ones perform
// (fused where those use FMA, std::fma; nothing else fused: engine/CMakeLists.txt builds this
// file with -ffp-contract=off), so the two give the same bits.

#if KVSCOPE_X86_SIMD
#include <immintrin.h>
#endif

namespace kvscope {

namespace {

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

float exp_lane(float x) {
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

// ((l0 + l4) + (l2 + l6)) + ((l1 + l5) + (l3 + l7)): the AVX2 horizontal sum's tree.
float reduce_lanes(const float* l) {
  return ((l[0] + l[4]) + (l[2] + l[6])) + ((l[1] + l[5]) + (l[3] + l[7]));
}

float dot_portable(const float* a, const float* b, std::int64_t row) {
  float l[kLanes] = {};
  for (std::int64_t i = 0; i < row; i += kLanes) {
    for (std::int64_t j = 0; j < kLanes; ++j) l[j] = std::fma(a[i + j], b[i + j], l[j]);
  }
  return reduce_lanes(l);
}

// Raises head h's running max to at least `block_max`, re-weighing what it holds.
void raise_max(FloatAttentionState& st, std::int64_t h, float block_max) {
  if (!(block_max > st.max[h])) return;
  if (!st.empty(h)) {
    const float r = exp_lane(st.max[h] - block_max);
    float* a = &st.acc[h * st.row];
    for (std::int64_t i = 0; i < st.row; ++i) a[i] *= r;
    st.sum[h] *= r;
  }
  st.max[h] = block_max;
}

float max_of(const float* s, std::int64_t n) {
  float m = s[0];
  for (std::int64_t j = 1; j < n; ++j) m = s[j] > m ? s[j] : m;
  return m;
}

void keys_portable(const float* q, const float* k, const float* v, std::int64_t n_keys,
                   FloatAttentionState& st, float* scores) {
  const std::int64_t row = st.row;
  for (std::int64_t h = 0; h < st.n_heads; ++h) {
    float* w = scores + h * ((n_keys + kLanes - 1) / kLanes * kLanes);
    for (std::int64_t j = 0; j < n_keys; ++j) w[j] = dot_portable(q + h * row, k + j * row, row);
    raise_max(st, h, max_of(w, n_keys));
    for (std::int64_t j = 0; j < n_keys; ++j) w[j] = exp_lane(w[j] - st.max[h]);
    for (std::int64_t j = 0; j < n_keys; ++j) st.sum[h] += w[j];
    float* a = &st.acc[h * row];
    for (std::int64_t j = 0; j < n_keys; ++j) {
      for (std::int64_t i = 0; i < row; ++i) a[i] = std::fma(w[j], v[j * row + i], a[i]);
    }
  }
}

void merge_portable(FloatAttentionState& into, const FloatAttentionState& from, std::int64_t h,
                    float ri, float rf) {
  float* a = &into.acc[h * into.row];
  const float* f = &from.acc[h * into.row];
  for (std::int64_t i = 0; i < into.row; ++i) a[i] = std::fma(f[i], rf, a[i] * ri);
}

#if KVSCOPE_X86_SIMD

KVSCOPE_TARGET_AVX2 __m256 exp8(__m256 x) {
  x = _mm256_max_ps(_mm256_min_ps(x, _mm256_set1_ps(kExpHi)), _mm256_set1_ps(kExpLo));
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(kLog2e)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fmadd_ps(n, _mm256_set1_ps(-kLn2Hi), x);
  r = _mm256_fmadd_ps(n, _mm256_set1_ps(-kLn2Lo), r);
  __m256 p = _mm256_set1_ps(kExpPoly[0]);
  for (int i = 1; i < 6; ++i) p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kExpPoly[i]));
  p = _mm256_add_ps(_mm256_fmadd_ps(p, _mm256_mul_ps(r, r), r), _mm256_set1_ps(1.0f));
  const __m256i e =
      _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  return _mm256_mul_ps(p, _mm256_castsi256_ps(e));
}

KVSCOPE_TARGET_AVX2 float reduce8(__m256 x) {
  const __m128 s = _mm_add_ps(_mm256_castps256_ps128(x), _mm256_extractf128_ps(x, 1));
  const __m128 t = _mm_add_ps(s, _mm_movehl_ps(s, s));  // [s0 + s2, s1 + s3, ...]
  return _mm_cvtss_f32(_mm_add_ss(t, _mm_shuffle_ps(t, t, 1)));
}

KVSCOPE_TARGET_AVX2 float dot_avx2(const float* a, const float* b, std::int64_t row) {
  __m256 s = _mm256_setzero_ps();
  for (std::int64_t i = 0; i < row; i += kLanes) {
    s = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), s);
  }
  return reduce8(s);
}

// w[j] = e^(w[j] - m) for j < n, 8 at a time (the last 8 through a copy).
KVSCOPE_TARGET_AVX2 void exp_shifted_avx2(float* w, std::int64_t n, float m) {
  const __m256 mv = _mm256_set1_ps(m);
  std::int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes) {
    _mm256_storeu_ps(w + j, exp8(_mm256_sub_ps(_mm256_loadu_ps(w + j), mv)));
  }
  if (j < n) {
    alignas(32) float tail[kLanes] = {};
    std::copy(w + j, w + n, tail);
    _mm256_store_ps(tail, exp8(_mm256_sub_ps(_mm256_load_ps(tail), mv)));
    std::copy(tail, tail + (n - j), w + j);
  }
}

// a[0, row) += sum_j w[j] v[j], in key order for every element, with up to 64 columns of the
// accumulator held in registers across the keys.
KVSCOPE_TARGET_AVX2 void accumulate_avx2(float* a, const float* w, const float* v,
                                         std::int64_t n_keys, std::int64_t row) {
  constexpr std::int64_t kRegs = 8;
  for (std::int64_t c0 = 0; c0 < row; c0 += kRegs * kLanes) {
    const std::int64_t n_regs = std::min(kRegs, (row - c0) / kLanes);
    __m256 acc[kRegs];
    for (std::int64_t r = 0; r < n_regs; ++r) acc[r] = _mm256_loadu_ps(a + c0 + r * kLanes);
    for (std::int64_t j = 0; j < n_keys; ++j) {
      const __m256 wj = _mm256_set1_ps(w[j]);
      const float* vj = v + j * row + c0;
      for (std::int64_t r = 0; r < n_regs; ++r) {
        acc[r] = _mm256_fmadd_ps(wj, _mm256_loadu_ps(vj + r * kLanes), acc[r]);
      }
    }
    for (std::int64_t r = 0; r < n_regs; ++r) _mm256_storeu_ps(a + c0 + r * kLanes, acc[r]);
  }
}

KVSCOPE_TARGET_AVX2 void keys_avx2(const float* q, const float* k, const float* v,
                                   std::int64_t n_keys, FloatAttentionState& st, float* scores) {
  const std::int64_t row = st.row;
  for (std::int64_t h = 0; h < st.n_heads; ++h) {
    float* w = scores + h * ((n_keys + kLanes - 1) / kLanes * kLanes);
    for (std::int64_t j = 0; j < n_keys; ++j) w[j] = dot_avx2(q + h * row, k + j * row, row);
    raise_max(st, h, max_of(w, n_keys));
    exp_shifted_avx2(w, n_keys, st.max[h]);
    for (std::int64_t j = 0; j < n_keys; ++j) st.sum[h] += w[j];
    accumulate_avx2(&st.acc[h * row], w, v, n_keys, row);
  }
}

KVSCOPE_TARGET_AVX2 void merge_avx2(FloatAttentionState& into, const FloatAttentionState& from,
                                    std::int64_t h, float ri, float rf) {
  float* a = &into.acc[h * into.row];
  const float* f = &from.acc[h * into.row];
  const __m256 vi = _mm256_set1_ps(ri), vf = _mm256_set1_ps(rf);
  for (std::int64_t i = 0; i < into.row; i += kLanes) {
    const __m256 scaled = _mm256_mul_ps(_mm256_loadu_ps(a + i), vi);
    _mm256_storeu_ps(a + i, _mm256_fmadd_ps(_mm256_loadu_ps(f + i), vf, scaled));
  }
}

KVSCOPE_TARGET_AVX2 void rows_from_f16_avx2(const std::uint16_t* src, std::int64_t stride,
                                            std::int64_t n, std::int64_t hd, std::int64_t row,
                                            float* dst) {
  for (std::int64_t j = 0; j < n; ++j, src += stride, dst += row) {
    std::int64_t i = 0;
    for (; i + kLanes <= hd; i += kLanes) {
      const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i));
      _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(h));
    }
    for (; i < hd; ++i) dst[i] = fp16_to_float(src[i]);
    for (; i < row; ++i) dst[i] = 0.0f;
  }
}

// 8 codes of a two-per-byte row from element i (even), low nibble first, as 32-bit lanes.
KVSCOPE_TARGET_AVX2 __m256i nibbles8(const std::uint8_t* data, std::int64_t i) {
  std::int32_t four = 0;
  std::memcpy(&four, data + i / 2, 4);
  const __m128i bytes = _mm_cvtsi32_si128(four);
  const __m128i mask = _mm_set1_epi8(0x0f);
  const __m128i lo = _mm_and_si128(bytes, mask);
  const __m128i hi = _mm_and_si128(_mm_srli_epi16(bytes, 4), mask);
  return _mm256_cvtepu8_epi32(_mm_unpacklo_epi8(lo, hi));  // [lo0, hi0, lo1, hi1, ...]
}

// kv_dequantize's Int8 / Int4 groups (value = s * q) and kv_k4_dequantize's offset-int4
// groups (value = (o + m) + s * code), 8 values at a time inside a group; a group's last
// values, when its size is not a multiple of 8, one at a time with the same operations.
KVSCOPE_TARGET_AVX2 void row_from_quantized_avx2(KvSide side, KvDtype dtype,
                                                 const std::uint8_t* data,
                                                 const std::uint16_t* scales, const float* offsets,
                                                 std::int64_t hd, float* out) {
  const bool k4 = side == KvSide::K && dtype == KvDtype::Int4;
  const std::int64_t group = kv_group_size(side, dtype, hd);
  for (std::int64_t begin = 0, g = 0; begin < hd; begin += group, ++g) {
    const std::int64_t end = std::min(begin + group, hd);
    const float s = fp16_to_float(scales[k4 ? 2 * g : g]);
    const float m = k4 ? fp16_to_float(scales[2 * g + 1]) : 0.0f;
    const __m256 sv = _mm256_set1_ps(s), mv = _mm256_set1_ps(m);
    std::int64_t i = begin;
    for (; i + kLanes <= end; i += kLanes) {
      if (dtype == KvDtype::Int8) {
        const __m128i q = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(data + i));
        _mm256_storeu_ps(out + i, _mm256_mul_ps(sv, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(q))));
      } else if (!k4) {
        const __m256i q = _mm256_sub_epi32(nibbles8(data, i), _mm256_set1_epi32(8));
        _mm256_storeu_ps(out + i, _mm256_mul_ps(sv, _mm256_cvtepi32_ps(q)));
      } else {
        const __m256 code = _mm256_cvtepi32_ps(nibbles8(data, i));
        const __m256 om = _mm256_add_ps(_mm256_loadu_ps(offsets + i), mv);
        _mm256_storeu_ps(out + i, _mm256_add_ps(om, _mm256_mul_ps(sv, code)));
      }
    }
    for (; i < end; ++i) {
      if (dtype == KvDtype::Int8) {
        out[i] = s * static_cast<float>(static_cast<std::int8_t>(data[i]));
        continue;
      }
      const int nibble = (data[i / 2] >> (4 * (i & 1))) & 0x0f;
      out[i] = k4 ? (offsets[i] + m) + s * static_cast<float>(nibble)
                  : s * static_cast<float>(nibble - 8);
    }
  }
}

#endif  // KVSCOPE_X86_SIMD

}  // namespace

void FloatAttentionState::reset(std::int64_t heads, std::int64_t row_floats) {
  n_heads = heads;
  row = row_floats;
  max.assign(static_cast<std::size_t>(heads), -std::numeric_limits<float>::infinity());
  sum.assign(static_cast<std::size_t>(heads), 0.0f);
  acc.assign(static_cast<std::size_t>(heads * row_floats), 0.0f);
}

void float_attention_keys(const float* q, const float* k, const float* v, std::int64_t n_keys,
                          FloatAttentionState& state, float* scores) {
  if (n_keys <= 0) return;
#if KVSCOPE_X86_SIMD
  if (use_avx2_fma_f16c()) return keys_avx2(q, k, v, n_keys, state, scores);
#endif
  keys_portable(q, k, v, n_keys, state, scores);
}

void float_attention_merge(FloatAttentionState& into, const FloatAttentionState& from) {
  for (std::int64_t h = 0; h < into.n_heads; ++h) {
    if (from.empty(h)) continue;
    if (into.empty(h)) {
      into.max[h] = from.max[h];
      into.sum[h] = from.sum[h];
      std::copy_n(&from.acc[h * from.row], from.row, &into.acc[h * into.row]);
      continue;
    }
    const float m = std::max(into.max[h], from.max[h]);
    const float ri = exp_lane(into.max[h] - m), rf = exp_lane(from.max[h] - m);
    into.max[h] = m;
    into.sum[h] = std::fma(from.sum[h], rf, into.sum[h] * ri);
#if KVSCOPE_X86_SIMD
    if (use_avx2_fma_f16c()) {
      merge_avx2(into, from, h, ri, rf);
      continue;
    }
#endif
    merge_portable(into, from, h, ri, rf);
  }
}

void float_attention_end(const FloatAttentionState& state, std::int64_t head_dim, float* out) {
  for (std::int64_t h = 0; h < state.n_heads; ++h) {
    const float inv = state.empty(h) ? 0.0f : 1.0f / state.sum[h];
    const float* a = &state.acc[h * state.row];
    for (std::int64_t i = 0; i < head_dim; ++i) out[h * head_dim + i] = a[i] * inv;
  }
}

void float_attention_rows_from_f16(const std::uint16_t* src, std::int64_t src_stride,
                                   std::int64_t n, std::int64_t head_dim, std::int64_t row,
                                   float* dst) {
#if KVSCOPE_X86_SIMD
  if (use_avx2_fma_f16c()) return rows_from_f16_avx2(src, src_stride, n, head_dim, row, dst);
#endif
  for (std::int64_t j = 0; j < n; ++j, src += src_stride, dst += row) {
    for (std::int64_t i = 0; i < head_dim; ++i) dst[i] = fp16_to_float(src[i]);
    for (std::int64_t i = head_dim; i < row; ++i) dst[i] = 0.0f;
  }
}

void float_attention_rows_from_quantized(KvSide side, KvDtype dtype, const std::uint8_t* data,
                                         std::int64_t data_stride, const std::uint16_t* scales,
                                         std::int64_t scales_stride, const float* offsets,
                                         std::int64_t n, std::int64_t head_dim, std::int64_t row,
                                         float* out) {
  const bool k4 = side == KvSide::K && dtype == KvDtype::Int4;
#if KVSCOPE_X86_SIMD
  // groups of whole vectors of 8 (SmolLM2 and larger heads) run 8 lanes at a time
  const bool simd = use_avx2_fma_f16c() && kv_group_size(side, dtype, head_dim) % kLanes == 0;
#else
  const bool simd = false;
#endif
  for (std::int64_t j = 0; j < n; ++j, data += data_stride, scales += scales_stride, out += row) {
    std::fill(out + head_dim, out + row, 0.0f);
#if KVSCOPE_X86_SIMD
    if (simd) {
      row_from_quantized_avx2(side, dtype, data, scales, offsets, head_dim, out);
      continue;
    }
#endif
    if (k4) {
      kv_k4_dequantize(data, scales, offsets, head_dim, out);
    } else {
      kv_dequantize(dtype, data, scales, head_dim, out);
    }
  }
}

void float_attention_exp(const float* x, float* y, std::int64_t n) {
#if KVSCOPE_X86_SIMD
  if (use_avx2_fma_f16c()) {
    std::copy(x, x + n, y);
    exp_shifted_avx2(y, n, 0.0f);
    return;
  }
#endif
  for (std::int64_t i = 0; i < n; ++i) y[i] = exp_lane(x[i]);
}

}  // namespace kvscope
