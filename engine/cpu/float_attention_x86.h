// The x86 functions of float attention (float_attention_simd.h's SimdTable), written once on
// 256-bit float vectors and compiled twice: float_attention_avx2.cpp (AVX2 + FMA + F16C: the
// portable functions' bits) and float_attention_avx.cpp (AVX alone: a multiply and an add
// where those fuse, x86_vec.h's v_fmadd). Each file sets the flags and includes this once.
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "cpu/float_attention_simd.h"
#include "cpu/x86_vec.h"
#include "util/half.h"

namespace kvscope::float_attention_detail {
namespace {

using namespace kvscope::x86;  // NOLINT(google-build-using-namespace)

__m256 exp8(__m256 x) {
  x = _mm256_max_ps(_mm256_min_ps(x, _mm256_set1_ps(kExpHi)), _mm256_set1_ps(kExpLo));
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(kLog2e)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = v_fmadd(n, _mm256_set1_ps(-kLn2Hi), x);
  r = v_fmadd(n, _mm256_set1_ps(-kLn2Lo), r);
  __m256 p = _mm256_set1_ps(kExpPoly[0]);
  for (int i = 1; i < 6; ++i) p = v_fmadd(p, r, _mm256_set1_ps(kExpPoly[i]));
  p = _mm256_add_ps(v_fmadd(p, _mm256_mul_ps(r, r), r), _mm256_set1_ps(1.0f));
  return _mm256_mul_ps(p, pow2_int(n));
}

float reduce8(__m256 x) {
  const __m128 s = _mm_add_ps(_mm256_castps256_ps128(x), _mm256_extractf128_ps(x, 1));
  const __m128 t = _mm_add_ps(s, _mm_movehl_ps(s, s));  // [s0 + s2, s1 + s3, ...]
  return _mm_cvtss_f32(_mm_add_ss(t, _mm_shuffle_ps(t, t, 1)));
}

// The kernels below take the row length as a template argument where it is one of the common
// head sizes (kRow: 64 or 128 floats; 0: only known at run time, `row`). A known length turns
// the loops over a row into straight code: at a run-time length the loop counters cost as
// much as the arithmetic, and the accumulator array of `accumulate` lived in memory. The
// operations and their order are the same either way, so are the bits.
template <std::int64_t kRow>
KVSCOPE_X86_INLINE std::int64_t row_length(std::int64_t row) {
  return kRow > 0 ? kRow : row;
}

template <std::int64_t kRow = 0>
KVSCOPE_X86_INLINE float dot(const float* a, const float* b, std::int64_t row) {
  __m256 s = _mm256_setzero_ps();
  const std::int64_t n = row_length<kRow>(row);
#pragma GCC unroll 16
  for (std::int64_t i = 0; i < n; i += kLanes) {
    s = v_fmadd(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), s);
  }
  return reduce8(s);
}

// w[j] = e^(w[j] - m) for j < n, 8 at a time (the last 8 through a copy).
void exp_shifted(float* w, std::int64_t n, float m) {
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
template <std::int64_t kRow>
KVSCOPE_X86_INLINE void accumulate(float* a, const float* w, const float* v, std::int64_t n_keys,
                                   std::int64_t row_rt) {
  constexpr std::int64_t kRegs = 8;
  const std::int64_t row = row_length<kRow>(row_rt);
  for (std::int64_t c0 = 0; c0 < row; c0 += kRegs * kLanes) {
    const std::int64_t n_regs = std::min(kRegs, (row - c0) / kLanes);
    __m256 acc[kRegs] = {};
#pragma GCC unroll 8
    for (std::int64_t r = 0; r < n_regs; ++r) acc[r] = _mm256_loadu_ps(a + c0 + r * kLanes);
    for (std::int64_t j = 0; j < n_keys; ++j) {
      const __m256 wj = _mm256_set1_ps(w[j]);
      const float* vj = v + j * row + c0;
#pragma GCC unroll 8
      for (std::int64_t r = 0; r < n_regs; ++r) {
        acc[r] = v_fmadd(wj, _mm256_loadu_ps(vj + r * kLanes), acc[r]);
      }
    }
#pragma GCC unroll 8
    for (std::int64_t r = 0; r < n_regs; ++r) _mm256_storeu_ps(a + c0 + r * kLanes, acc[r]);
  }
}

template <std::int64_t kRow>
void keys_of_row(const float* q, const float* k, const float* v, std::int64_t n_keys,
                 FloatAttentionState& st, float* scores) {
  const std::int64_t row = row_length<kRow>(st.row);
  for (std::int64_t h = 0; h < st.n_heads; ++h) {
    float* w = scores + h * ((n_keys + kLanes - 1) / kLanes * kLanes);
    for (std::int64_t j = 0; j < n_keys; ++j) w[j] = dot<kRow>(q + h * row, k + j * row, row);
    raise_max(st, h, max_of(w, n_keys));
    exp_shifted(w, n_keys, st.max[h]);
    for (std::int64_t j = 0; j < n_keys; ++j) st.sum[h] += w[j];
    accumulate<kRow>(&st.acc[h * row], w, v, n_keys, row);
  }
}

void keys(const float* q, const float* k, const float* v, std::int64_t n_keys,
          FloatAttentionState& st, float* scores) {
  switch (st.row) {
    case 64:
      return keys_of_row<64>(q, k, v, n_keys, st, scores);
    case 128:
      return keys_of_row<128>(q, k, v, n_keys, st, scores);
    default:
      return keys_of_row<0>(q, k, v, n_keys, st, scores);
  }
}

void merge(FloatAttentionState& into, const FloatAttentionState& from, std::int64_t h, float ri,
           float rf) {
  float* a = &into.acc[h * into.row];
  const float* f = &from.acc[h * into.row];
  const __m256 vi = _mm256_set1_ps(ri), vf = _mm256_set1_ps(rf);
  for (std::int64_t i = 0; i < into.row; i += kLanes) {
    const __m256 scaled = _mm256_mul_ps(_mm256_loadu_ps(a + i), vi);
    _mm256_storeu_ps(a + i, v_fmadd(_mm256_loadu_ps(f + i), vf, scaled));
  }
}

template <std::int64_t kHd>
void rows_from_f16_of(const std::uint16_t* src, std::int64_t stride, std::int64_t n,
                      std::int64_t hd_rt, std::int64_t row, float* dst) {
  const std::int64_t hd = row_length<kHd>(hd_rt);
  for (std::int64_t j = 0; j < n; ++j, src += stride, dst += row) {
    std::int64_t i = 0;
    for (; i + kLanes <= hd; i += kLanes) _mm256_storeu_ps(dst + i, f16x8_to_float(src + i));
    for (; i < hd; ++i) dst[i] = fp16_to_float(src[i]);
    for (; i < row; ++i) dst[i] = 0.0f;
  }
}

void rows_from_f16(const std::uint16_t* src, std::int64_t stride, std::int64_t n, std::int64_t hd,
                   std::int64_t row, float* dst) {
  switch (hd) {
    case 64:
      return rows_from_f16_of<64>(src, stride, n, hd, row, dst);
    case 128:
      return rows_from_f16_of<128>(src, stride, n, hd, row, dst);
    default:
      return rows_from_f16_of<0>(src, stride, n, hd, row, dst);
  }
}

// The fp16 scales of one vector as floats, 8 at a time: count <= kMaxScales scales, of which
// `readable` (>= count) may be read; when a whole 8 (16) cannot be read they are copied first.
constexpr std::int64_t kMaxScales = 16;
void scales_to_float(const std::uint16_t* scales, std::int64_t count, std::int64_t readable,
                     float* out) {
  const std::int64_t loads = count > kLanes ? 2 : 1;
  if (readable >= loads * kLanes) {
    for (std::int64_t l = 0; l < loads; ++l) {
      _mm256_storeu_ps(out + l * kLanes, f16x8_to_float(scales + l * kLanes));
    }
    return;
  }
  alignas(16) std::uint16_t h[kMaxScales] = {};
  std::memcpy(h, scales, static_cast<std::size_t>(count) * sizeof(std::uint16_t));
  for (std::int64_t l = 0; l < loads; ++l) {
    _mm256_storeu_ps(out + l * kLanes, f16x8_to_float(h + l * kLanes));
  }
}

// 16 codes of 8 bytes, low nibble first, as two vectors of 8 floats (in registers: the codes
// used to go through memory, a store and two reloads per 16 values).
KVSCOPE_X86_INLINE void nibbles16_to_float(const std::uint8_t* bytes, __m256& first,
                                           __m256& second) {
  const __m128i x = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(bytes));
  const __m128i mask = _mm_set1_epi8(0x0f);
  const __m128i lo = _mm_and_si128(x, mask);
  const __m128i hi = _mm_and_si128(_mm_srli_epi16(x, 4), mask);
  const __m128i codes = _mm_unpacklo_epi8(lo, hi);  // [lo0, hi0, lo1, hi1, ...]
  first = u8x8_reg_to_float(codes);
  second = u8x8_reg_to_float(_mm_srli_si128(codes, 8));
}

// One group [begin, end) of a vector: kv_dequantize's Int8 / Int4 values (s * q) or
// kv_k4_dequantize's offset-int4 ones ((o + m) + s * code). 16 values at a time from a
// byte-aligned int4 group, else 8, else (a group size not a multiple of 8) one by one with
// the same operations.
void group_from_quantized(bool k4, KvDtype dtype, const std::uint8_t* data, float s, float m,
                          const float* offsets, std::int64_t begin, std::int64_t end, float* out) {
  const __m256 sv = _mm256_set1_ps(s), mv = _mm256_set1_ps(m), eight = _mm256_set1_ps(8.0f);
  // int4 code(s) -> values; nibble - 8 is exact in float
  const auto int4_values = [&](__m256 codes, std::int64_t i) {
    if (!k4) return _mm256_mul_ps(sv, _mm256_sub_ps(codes, eight));
    const __m256 om = _mm256_add_ps(_mm256_loadu_ps(offsets + i), mv);
    return _mm256_add_ps(om, _mm256_mul_ps(sv, codes));
  };
  std::int64_t i = begin;
  if (dtype == KvDtype::Int8) {
    for (; i + kLanes <= end; i += kLanes) {
      _mm256_storeu_ps(out + i, _mm256_mul_ps(sv, s8x8_to_float(data + i)));
    }
  } else {
    if (i % 2 == 0) {
      for (; i + 2 * kLanes <= end; i += 2 * kLanes) {
        __m256 first, second;
        nibbles16_to_float(data + i / 2, first, second);
        _mm256_storeu_ps(out + i, int4_values(first, i));
        _mm256_storeu_ps(out + i + kLanes, int4_values(second, i + kLanes));
      }
    }
    for (; i + kLanes <= end; i += kLanes) {
      _mm256_storeu_ps(out + i, int4_values(nibbles8_to_float(data, i), i));
    }
  }
  for (; i < end; ++i) {
    if (dtype == KvDtype::Int8) {
      out[i] = s * static_cast<float>(static_cast<std::int8_t>(data[i]));
      continue;
    }
    const int nibble = (data[i / 2] >> (4 * (i & 1))) & 0x0f;
    out[i] =
        k4 ? (offsets[i] + m) + s * static_cast<float>(nibble) : s * static_cast<float>(nibble - 8);
  }
}

// Int4 rows whose groups are whole runs of 16 values (SmolLM2's and larger heads: offset-int4
// keys in groups of 16, values in groups of 32): group_from_quantized's operations in the same
// order, inlined, 16 values per step. sf: the vector's scales as floats.
template <bool kK4>
KVSCOPE_X86_INLINE void int4_row(const std::uint8_t* data, const float* sf, const float* offsets,
                                 std::int64_t group, std::int64_t hd, float* out) {
  const __m256 eight = _mm256_set1_ps(8.0f);
  for (std::int64_t begin = 0, g = 0; begin < hd; begin += group, ++g) {
    const __m256 sv = _mm256_set1_ps(sf[kK4 ? 2 * g : g]);
    const __m256 mv = _mm256_set1_ps(kK4 ? sf[2 * g + 1] : 0.0f);
    for (std::int64_t i = begin; i < begin + group; i += 2 * kLanes) {
      __m256 codes[2];
      nibbles16_to_float(data + i / 2, codes[0], codes[1]);
      for (int h = 0; h < 2; ++h) {
        const std::int64_t at = i + h * kLanes;
        const __m256 value = kK4 ? _mm256_add_ps(_mm256_add_ps(_mm256_loadu_ps(offsets + at), mv),
                                                 _mm256_mul_ps(sv, codes[h]))
                                 : _mm256_mul_ps(sv, _mm256_sub_ps(codes[h], eight));
        _mm256_storeu_ps(out + at, value);
      }
    }
  }
}

// float_attention_rows_from_quantized for group sizes that are a multiple of 8: n vectors,
// each one's scales converted 8 at a time (when there are at most kMaxScales) and its
// groups decoded by group_from_quantized.
void rows_from_quantized(KvSide side, KvDtype dtype, const std::uint8_t* data,
                         std::int64_t data_stride, const std::uint16_t* scales,
                         std::int64_t scales_stride, const float* offsets, std::int64_t n,
                         std::int64_t hd, std::int64_t row, float* out) {
  const bool k4 = side == KvSide::K && dtype == KvDtype::Int4;
  const std::int64_t group = kv_group_size(side, dtype, hd);
  const std::int64_t n_scales = kv_scales_per_vector(side, dtype, hd);
  // the scales of vectors [j, n) span (n - 1 - j) * scales_stride + n_scales halves (the slots
  // of a block store them one after another: scales_stride == n_scales)
  const std::int64_t span = (n - 1) * scales_stride + n_scales;
  alignas(32) float sf[kMaxScales];
  for (std::int64_t j = 0; j < n; ++j, data += data_stride, scales += scales_stride, out += row) {
    std::fill(out + hd, out + row, 0.0f);
    if (n_scales <= kMaxScales) scales_to_float(scales, n_scales, span - j * scales_stride, sf);
    if (dtype == KvDtype::Int4 && group % (2 * kLanes) == 0 && hd % group == 0 &&
        n_scales <= kMaxScales) {
      if (k4) {
        int4_row<true>(data, sf, offsets, group, hd, out);
      } else {
        int4_row<false>(data, sf, offsets, group, hd, out);
      }
      continue;
    }
    const auto scale = [&](std::int64_t k) {
      return n_scales <= kMaxScales ? sf[k] : fp16_to_float(scales[k]);
    };
    for (std::int64_t begin = 0, g = 0; begin < hd; begin += group, ++g) {
      const float s = scale(k4 ? 2 * g : g);
      const float m = k4 ? scale(2 * g + 1) : 0.0f;
      group_from_quantized(k4, dtype, data, s, m, offsets, begin, std::min(begin + group, hd), out);
    }
  }
}

constexpr SimdTable kTable{&keys, &merge, &rows_from_f16, &rows_from_quantized, &exp_shifted};

}  // namespace
}  // namespace kvscope::float_attention_detail
