#include "kv/format/kv_quantize_sse2.h"

#include "kv/format/group_scales.h"
#include "util/half.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace kvscope::kv_sse2 {

#if defined(__SSE2__)
namespace {

__m128i splat(int v) {
  return _mm_set1_epi32(v);
}

// (m & a) | (~m & b) per lane.
__m128i select(__m128i m, __m128i a, __m128i b) {
  return _mm_or_si128(_mm_and_si128(m, a), _mm_andnot_si128(m, b));
}

// Lanes whose float is NaN or infinite: all exponent bits set.
__m128i not_finite(__m128 f) {
  const __m128i exp = _mm_and_si128(_mm_castps_si128(f), splat(0x7f800000));
  return _mm_cmpeq_epi32(exp, splat(0x7f800000));
}

// float_to_fp16 (util/half.h) on 4 lanes, bit for bit: NaN -> sign | 0x7e00, from 65520 on
// -> sign | inf, below 2^-14 the value on the 2^-24 grid rounded to nearest even, else the
// exponent rebiased and the mantissa rounded from 23 to 10 bits, nearest even. Each lane's
// 16 bits are in its low half.
__m128i fp16_bits(__m128 f) {
  const __m128i x = _mm_castps_si128(f);
  const __m128i one = splat(1);
  const __m128i sign = _mm_and_si128(_mm_srli_epi32(x, 16), splat(0x8000));
  const __m128i abs = _mm_and_si128(x, splat(0x7fffffff));
  __m128i r = _mm_sub_epi32(abs, splat(112 << 23));
  r = _mm_add_epi32(r, _mm_add_epi32(splat(0xfff), _mm_and_si128(_mm_srli_epi32(r, 13), one)));
  __m128i out = _mm_srli_epi32(r, 13);
  // subnormal results: scaled = |x| 2^24 (exact), truncated, then up when the remainder is
  // above one half, or one half and the truncation odd
  const __m128 scaled = _mm_mul_ps(_mm_castsi128_ps(abs), _mm_set1_ps(16777216.0f));
  const __m128i q = _mm_cvttps_epi32(scaled);
  const __m128 rem = _mm_sub_ps(scaled, _mm_cvtepi32_ps(q));
  const __m128 half = _mm_set1_ps(0.5f);
  const __m128i odd = _mm_cmpeq_epi32(_mm_and_si128(q, one), one);
  const __m128i up = _mm_or_si128(_mm_castps_si128(_mm_cmpgt_ps(rem, half)),
                                  _mm_and_si128(_mm_castps_si128(_mm_cmpeq_ps(rem, half)), odd));
  out = select(_mm_cmplt_epi32(abs, splat(0x38800000)), _mm_sub_epi32(q, up), out);
  out = select(_mm_cmpgt_epi32(abs, splat(0x477ff000 - 1)), splat(0x7c00), out);
  out = select(_mm_cmpgt_epi32(abs, splat(0x7f800000)), splat(0x7e00), out);
  return _mm_or_si128(out, sign);
}

// Two vectors of fp16 lanes (fp16_bits) as 8 uint16: sign-extended from 16 bits first, so the
// saturating pack keeps every bit pattern.
__m128i pack_fp16(__m128i a, __m128i b) {
  a = _mm_srai_epi32(_mm_slli_epi32(a, 16), 16);
  b = _mm_srai_epi32(_mm_slli_epi32(b, 16), 16);
  return _mm_packs_epi32(a, b);
}

// Four fp16 values (zero-extended into 32-bit lanes) as floats, exact for finite ones: the
// magnitude's bits shifted into a float's exponent and mantissa, times 2^112 to rebias, is
// the value for normal and subnormal halves alike (kv_format_k4.cpp's fp16_value).
__m128 fp16_floats(__m128i h) {
  const __m128i sign = _mm_slli_epi32(_mm_and_si128(h, splat(0x8000)), 16);
  const __m128i mag = _mm_slli_epi32(_mm_and_si128(h, splat(0x7fff)), 13);
  const __m128 f = _mm_mul_ps(_mm_castsi128_ps(mag), _mm_set1_ps(0x1p112f));
  return _mm_or_ps(f, _mm_castsi128_ps(sign));
}

float horizontal_min(__m128 v) {
  v = _mm_min_ps(v, _mm_shuffle_ps(v, v, _MM_SHUFFLE(1, 0, 3, 2)));
  v = _mm_min_ps(v, _mm_shuffle_ps(v, v, _MM_SHUFFLE(2, 3, 0, 1)));
  return _mm_cvtss_f32(v);
}

float horizontal_max(__m128 v) {
  v = _mm_max_ps(v, _mm_shuffle_ps(v, v, _MM_SHUFFLE(1, 0, 3, 2)));
  v = _mm_max_ps(v, _mm_shuffle_ps(v, v, _MM_SHUFFLE(2, 3, 0, 1)));
  return _mm_cvtss_f32(v);
}

// code_round(code_clamp(v, lo, hi)) (code_round.h) on 4 lanes: the clamp as its two
// comparisons (max and min return their second operand on equal or NaN lanes, as the
// scalar's `v > lo ? v : lo` and `above < hi ? above : hi` do), then the truncation moved one
// up or down when the exact remainder reaches one half.
__m128i round_codes(__m128 v, __m128 lo, __m128 hi) {
  v = _mm_min_ps(_mm_max_ps(v, lo), hi);
  const __m128i t = _mm_cvttps_epi32(v);
  const __m128 frac = _mm_sub_ps(v, _mm_cvtepi32_ps(t));
  const __m128i up = _mm_castps_si128(_mm_cmpge_ps(frac, _mm_set1_ps(0.5f)));
  const __m128i down = _mm_castps_si128(_mm_cmple_ps(frac, _mm_set1_ps(-0.5f)));
  return _mm_add_epi32(_mm_sub_epi32(t, up), down);  // up and down are -1 where set
}

// 16 codes 0..15 (four vectors of 32-bit lanes) as 8 bytes, low nibble the even element.
void store_nibbles(const __m128i (&c)[4], std::uint8_t* out) {
  const __m128i bytes = _mm_packus_epi16(_mm_packs_epi32(c[0], c[1]), _mm_packs_epi32(c[2], c[3]));
  // 16-bit lane k holds c[2k] | c[2k + 1] << 8; the byte wanted is c[2k] | c[2k + 1] << 4
  const __m128i pairs =
      _mm_or_si128(_mm_and_si128(bytes, _mm_set1_epi16(0x000f)),
                   _mm_and_si128(_mm_srli_epi16(bytes, 4), _mm_set1_epi16(0x00f0)));
  _mm_storel_epi64(reinterpret_cast<__m128i*>(out), _mm_packus_epi16(pairs, _mm_setzero_si128()));
}

// Whether every x[0..n) is finite (n a multiple of 4).
bool all_finite(const float* x, std::int64_t n) {
  __m128i bad = _mm_setzero_si128();
  for (std::int64_t i = 0; i < n; i += 4) bad = _mm_or_si128(bad, not_finite(_mm_loadu_ps(x + i)));
  return _mm_movemask_epi8(bad) == 0;
}

// The residuals r = x - o of a key against its block's fp16 offsets, into r[head_dim]; false
// when an offset or a residual is not finite.
bool k4_residuals(const float* x, const std::uint16_t* offsets, std::int64_t hd, float* r) {
  __m128i bad = _mm_setzero_si128();
  const __m128i zero = _mm_setzero_si128();
  for (std::int64_t i = 0; i < hd; i += 8) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(offsets + i));
    bad = _mm_or_si128(
        bad, _mm_cmpeq_epi16(_mm_and_si128(h, _mm_set1_epi16(0x7c00)), _mm_set1_epi16(0x7c00)));
    const __m128 r0 = _mm_sub_ps(_mm_loadu_ps(x + i), fp16_floats(_mm_unpacklo_epi16(h, zero)));
    const __m128 r1 = _mm_sub_ps(_mm_loadu_ps(x + i + 4), fp16_floats(_mm_unpackhi_epi16(h, zero)));
    bad = _mm_or_si128(bad, _mm_or_si128(not_finite(r0), not_finite(r1)));
    _mm_storeu_ps(r + i, r0);
    _mm_storeu_ps(r + i + 4, r1);
  }
  return _mm_movemask_epi8(bad) == 0;
}

// A group's residual range as kv_k4_quantize scans it: `r < lo` and `r > hi` in order keep
// the first of equal values, which matters only for zeros (+0 and -0 compare equal and store
// different fp16 bits); the SIMD minimum decides every other case.
void k4_range(const float* r, std::int64_t n, float* lo, float* hi) {
  __m128 mn = _mm_loadu_ps(r), mx = mn;
  for (std::int64_t i = 4; i < n; i += 4) {
    const __m128 v = _mm_loadu_ps(r + i);
    mn = _mm_min_ps(mn, v);
    mx = _mm_max_ps(mx, v);
  }
  *lo = horizontal_min(mn);
  *hi = horizontal_max(mx);
  if (*lo != 0.0f && *hi != 0.0f) return;
  *lo = *hi = r[0];
  for (std::int64_t i = 1; i < n; ++i) {
    if (r[i] < *lo) *lo = r[i];
    if (r[i] > *hi) *hi = r[i];
  }
}

// Eight fp16 values from memory as floats (fp16_floats); `bad` gains the lanes that are
// inf or NaN.
void load_fp16(const void* from, __m128& lo, __m128& hi, __m128i& bad) {
  const __m128i h = _mm_loadu_si128(static_cast<const __m128i*>(from));
  bad = _mm_or_si128(
      bad, _mm_cmpeq_epi16(_mm_and_si128(h, _mm_set1_epi16(0x7c00)), _mm_set1_epi16(0x7c00)));
  lo = fp16_floats(_mm_unpacklo_epi16(h, _mm_setzero_si128()));
  hi = fp16_floats(_mm_unpackhi_epi16(h, _mm_setzero_si128()));
}

// The 16 codes of 8 bytes (low nibble first) as floats, four vectors.
void load_nibbles(const std::uint8_t* from, __m128 (&c)[4]) {
  const __m128i b = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(from));
  const __m128i lo = _mm_and_si128(b, _mm_set1_epi8(0x0f));
  const __m128i hi = _mm_and_si128(_mm_srli_epi16(b, 4), _mm_set1_epi8(0x0f));
  const __m128i codes = _mm_unpacklo_epi8(lo, hi);  // c0 c1 ... c15
  const __m128i zero = _mm_setzero_si128();
  const __m128i c01 = _mm_unpacklo_epi8(codes, zero), c23 = _mm_unpackhi_epi8(codes, zero);
  c[0] = _mm_cvtepi32_ps(_mm_unpacklo_epi16(c01, zero));
  c[1] = _mm_cvtepi32_ps(_mm_unpackhi_epi16(c01, zero));
  c[2] = _mm_cvtepi32_ps(_mm_unpacklo_epi16(c23, zero));
  c[3] = _mm_cvtepi32_ps(_mm_unpackhi_epi16(c23, zero));
}

// The 16 int8 values at `from` as floats, four vectors.
void load_int8(const std::uint8_t* from, __m128 (&c)[4]) {
  const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(from));
  // sign-extend by placing each byte at the top of a 16- then 32-bit lane
  const __m128i w0 = _mm_srai_epi16(_mm_unpacklo_epi8(b, b), 8);
  const __m128i w1 = _mm_srai_epi16(_mm_unpackhi_epi8(b, b), 8);
  c[0] = _mm_cvtepi32_ps(_mm_srai_epi32(_mm_unpacklo_epi16(w0, w0), 16));
  c[1] = _mm_cvtepi32_ps(_mm_srai_epi32(_mm_unpackhi_epi16(w0, w0), 16));
  c[2] = _mm_cvtepi32_ps(_mm_srai_epi32(_mm_unpacklo_epi16(w1, w1), 16));
  c[3] = _mm_cvtepi32_ps(_mm_srai_epi32(_mm_unpackhi_epi16(w1, w1), 16));
}

}  // namespace

bool dequantize(KvDtype dtype, const std::uint8_t* data, const std::uint16_t* scales,
                std::int64_t hd, float* out) {
  if (dtype == KvDtype::F16) {
    if (hd % 8 != 0) return false;
    __m128i bad = _mm_setzero_si128();
    for (std::int64_t i = 0; i < hd; i += 8) {
      __m128 lo, hi;
      load_fp16(data + 2 * i, lo, hi, bad);
      _mm_storeu_ps(out + i, lo);
      _mm_storeu_ps(out + i + 4, hi);
    }
    return _mm_movemask_epi8(bad) == 0;  // out is scratch: the caller decodes again
  }
  constexpr std::int64_t kGroup = 32;
  if (hd % kGroup != 0 || kv_group_size(hd) != kGroup) return false;
  for (std::int64_t g = 0; g < hd / kGroup; ++g) {
    const __m128 s = _mm_set1_ps(fp16_to_float(scales[g]));
    for (std::int64_t half = 0; half < 2; ++half) {  // 16 values each
      __m128 c[4];
      if (dtype == KvDtype::Int8) {
        load_int8(data + g * kGroup + 16 * half, c);
      } else {
        load_nibbles(data + g * kGroup / 2 + 8 * half, c);
        for (__m128& v : c) v = _mm_sub_ps(v, _mm_set1_ps(8.0f));  // q = nibble - 8, exact
      }
      for (int j = 0; j < 4; ++j) {
        _mm_storeu_ps(out + g * kGroup + 16 * half + 4 * j, _mm_mul_ps(s, c[j]));
      }
    }
  }
  return true;
}

bool k4_dequantize(const std::uint8_t* data, const std::uint16_t* scales,
                   const std::uint16_t* offsets, std::int64_t hd, float* out) {
  constexpr std::int64_t kGroup = 16;
  if (hd % kGroup != 0 || kv_k4_group_size(hd) != kGroup) return false;
  __m128i bad = _mm_setzero_si128();
  for (std::int64_t g = 0; g < hd / kGroup; ++g) {
    const __m128 s = _mm_set1_ps(fp16_to_float(scales[2 * g]));
    const __m128 m = _mm_set1_ps(fp16_to_float(scales[2 * g + 1]));
    __m128 o[4], c[4];
    load_fp16(offsets + g * kGroup, o[0], o[1], bad);
    load_fp16(offsets + g * kGroup + 8, o[2], o[3], bad);
    load_nibbles(data + g * kGroup / 2, c);
    for (int j = 0; j < 4; ++j) {
      _mm_storeu_ps(out + g * kGroup + 4 * j, _mm_add_ps(_mm_add_ps(o[j], m), _mm_mul_ps(s, c[j])));
    }
  }
  return _mm_movemask_epi8(bad) == 0;
}

bool store_f16(const float* x, std::int64_t n, std::uint8_t* out) {
  if (n % 4 != 0) return false;
  std::int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = pack_fp16(fp16_bits(_mm_loadu_ps(x + i)), fp16_bits(_mm_loadu_ps(x + i + 4)));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 2 * i), h);
  }
  if (i < n) {
    const __m128i h = pack_fp16(fp16_bits(_mm_loadu_ps(x + i)), _mm_setzero_si128());
    _mm_storel_epi64(reinterpret_cast<__m128i*>(out + 2 * i), h);
  }
  return true;
}

bool quantize_symmetric(KvDtype dtype, const float* x, std::int64_t hd, std::uint8_t* data,
                        std::uint16_t* scales) {
  constexpr std::int64_t kGroup = 32;
  if (dtype == KvDtype::F16 || hd % kGroup != 0 || kv_group_size(hd) != kGroup) return false;
  if (!all_finite(x, hd)) return false;
  const float qmax = dtype == KvDtype::Int8 ? 127.0f : 7.0f;
  const __m128 lo = _mm_set1_ps(-qmax), hi = _mm_set1_ps(qmax);
  const __m128 abs_mask = _mm_castsi128_ps(splat(0x7fffffff));
  for (std::int64_t g = 0; g < hd / kGroup; ++g) {
    const float* xg = x + g * kGroup;
    __m128 amax = _mm_setzero_ps();
    for (std::int64_t i = 0; i < kGroup; i += 4) {
      amax = _mm_max_ps(amax, _mm_and_ps(_mm_loadu_ps(xg + i), abs_mask));
    }
    scales[g] = kv_symmetric_scale(horizontal_max(amax), qmax);
    const float s = fp16_to_float(scales[g]);
    const __m128 inv = _mm_set1_ps(s > 0.0f ? 1.0f / s : 0.0f);
    __m128i q[8];
    for (int j = 0; j < 8; ++j)
      q[j] = round_codes(_mm_mul_ps(_mm_loadu_ps(xg + 4 * j), inv), lo, hi);
    if (dtype == KvDtype::Int8) {
      for (int j = 0; j < 8; j += 4) {
        const __m128i bytes =
            _mm_packs_epi16(_mm_packs_epi32(q[j], q[j + 1]), _mm_packs_epi32(q[j + 2], q[j + 3]));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(data + g * kGroup + 4 * j), bytes);
      }
    } else {  // nibble = q + 8, 16 codes per 8 bytes
      for (int j = 0; j < 8; ++j) q[j] = _mm_add_epi32(q[j], splat(8));
      store_nibbles({q[0], q[1], q[2], q[3]}, data + g * kGroup / 2);
      store_nibbles({q[4], q[5], q[6], q[7]}, data + g * kGroup / 2 + 8);
    }
  }
  return true;
}

bool k4_quantize(const float* x, const std::uint16_t* offsets, std::int64_t hd, std::uint8_t* data,
                 std::uint16_t* scales) {
  constexpr std::int64_t kGroup = 16;
  if (hd % kGroup != 0 || hd > kMaxHeadDim || kv_k4_group_size(hd) != kGroup) return false;
  alignas(16) float r[kMaxHeadDim];
  if (!k4_residuals(x, offsets, hd, r)) return false;
  const __m128 lo = _mm_setzero_ps(), hi = _mm_set1_ps(15.0f);
  for (std::int64_t g = 0; g < hd / kGroup; ++g) {
    const float* rg = r + g * kGroup;
    float mn = 0.0f, mx = 0.0f;
    k4_range(rg, kGroup, &mn, &mx);
    kv_k4_group_scales(mn, mx, &scales[2 * g], &scales[2 * g + 1]);
    const float s = fp16_to_float(scales[2 * g]);
    const __m128 m = _mm_set1_ps(fp16_to_float(scales[2 * g + 1]));
    const __m128 inv = _mm_set1_ps(s > 0.0f ? 1.0f / s : 0.0f);
    __m128i c[4];
    for (int j = 0; j < 4; ++j) {
      c[j] = round_codes(_mm_mul_ps(_mm_sub_ps(_mm_load_ps(rg + 4 * j), m), inv), lo, hi);
    }
    store_nibbles(c, data + g * kGroup / 2);
  }
  return true;
}

#else  // not an SSE2 build: the scalar code runs

bool store_f16(const float*, std::int64_t, std::uint8_t*) {
  return false;
}
bool quantize_symmetric(KvDtype, const float*, std::int64_t, std::uint8_t*, std::uint16_t*) {
  return false;
}
bool k4_quantize(const float*, const std::uint16_t*, std::int64_t, std::uint8_t*, std::uint16_t*) {
  return false;
}
bool dequantize(KvDtype, const std::uint8_t*, const std::uint16_t*, std::int64_t, float*) {
  return false;
}
bool k4_dequantize(const std::uint8_t*, const std::uint16_t*, const std::uint16_t*, std::int64_t,
                   float*) {
  return false;
}

#endif

}  // namespace kvscope::kv_sse2
