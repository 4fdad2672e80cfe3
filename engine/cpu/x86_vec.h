// 256 bits of integers, and the few float conversions the x86 kernels (quant_dot_x86.h,
// float_attention_x86.h) need, for the three instruction sets they are compiled for:
//   AVX2 (+ FMA, F16C) and AVX-512 VNNI: one __m256i, the instructions themselves;
//   AVX alone (Sandy Bridge, Ivy Bridge; no FMA, no F16C, integers only 128 bits wide): two
//   __m128i halves, each operation done on both with SSSE3 / SSE4.1, which is what AVX2's
//   integer instructions do lane by lane anyway (they never cross the 128-bit halves, except
//   the ones avoided here). Floats are 256-bit __m256 on all three.
// The kernel file sets KVSCOPE_X86_VNNI and KVSCOPE_X86_AVX1 (0 or 1) before including it.
// Everything has internal linkage: each kernel file gets its own copy for its instruction set.
#pragma once

#include <immintrin.h>

#include <cmath>
#include <cstdint>
#include <cstring>

#ifndef KVSCOPE_X86_AVX1
#define KVSCOPE_X86_AVX1 0
#endif

// Every helper is inlined into its kernel (GCC left the fp16 conversion a call per block).
#define KVSCOPE_X86_INLINE [[gnu::always_inline]] inline

namespace kvscope::x86 {
namespace {

#if KVSCOPE_X86_AVX1

struct IVec {
  __m128i lo, hi;  // bytes 0..15, 16..31 (or int32 lanes 0..3, 4..7)
};

// Applies a 128-bit operation to both halves.
#define KVSCOPE_IVEC_2(op, a, b)           \
  IVec {                                   \
    op((a).lo, (b).lo), op((a).hi, (b).hi) \
  }
#define KVSCOPE_IVEC_1(op, a, ...)                   \
  IVec {                                             \
    op((a).lo, __VA_ARGS__), op((a).hi, __VA_ARGS__) \
  }

KVSCOPE_X86_INLINE IVec iv_load(const void* p) {
  const auto* q = static_cast<const __m128i*>(p);
  return {_mm_loadu_si128(q), _mm_loadu_si128(q + 1)};
}
KVSCOPE_X86_INLINE IVec iv_zero() {
  return {_mm_setzero_si128(), _mm_setzero_si128()};
}
KVSCOPE_X86_INLINE IVec iv_halves(__m128i lo, __m128i hi) {
  return {lo, hi};
}
KVSCOPE_X86_INLINE IVec iv_set1_8(char v) {
  const __m128i x = _mm_set1_epi8(v);
  return {x, x};
}
KVSCOPE_X86_INLINE IVec iv_set1_16(short v) {
  const __m128i x = _mm_set1_epi16(v);
  return {x, x};
}
KVSCOPE_X86_INLINE IVec iv_set1_32(int v) {
  const __m128i x = _mm_set1_epi32(v);
  return {x, x};
}
KVSCOPE_X86_INLINE IVec iv_set1_64(long long v) {
  const __m128i x = _mm_set1_epi64x(v);
  return {x, x};
}
// The same 16 bytes in both halves (the form every shuffle control here has).
KVSCOPE_X86_INLINE IVec iv_bytes16(char b0, char b1, char b2, char b3, char b4, char b5, char b6,
                                   char b7, char b8, char b9, char b10, char b11, char b12,
                                   char b13, char b14, char b15) {
  const __m128i x =
      _mm_setr_epi8(b0, b1, b2, b3, b4, b5, b6, b7, b8, b9, b10, b11, b12, b13, b14, b15);
  return {x, x};
}
KVSCOPE_X86_INLINE IVec iv_and(IVec a, IVec b) {
  return KVSCOPE_IVEC_2(_mm_and_si128, a, b);
}
KVSCOPE_X86_INLINE IVec iv_or(IVec a, IVec b) {
  return KVSCOPE_IVEC_2(_mm_or_si128, a, b);
}
KVSCOPE_X86_INLINE IVec iv_xor(IVec a, IVec b) {
  return KVSCOPE_IVEC_2(_mm_xor_si128, a, b);
}
KVSCOPE_X86_INLINE IVec iv_sub8(IVec a, IVec b) {
  return KVSCOPE_IVEC_2(_mm_sub_epi8, a, b);
}
KVSCOPE_X86_INLINE IVec iv_add32(IVec a, IVec b) {
  return KVSCOPE_IVEC_2(_mm_add_epi32, a, b);
}
KVSCOPE_X86_INLINE IVec iv_cmpeq8(IVec a, IVec b) {
  return KVSCOPE_IVEC_2(_mm_cmpeq_epi8, a, b);
}
KVSCOPE_X86_INLINE IVec iv_sign8(IVec a, IVec b) {
  return KVSCOPE_IVEC_2(_mm_sign_epi8, a, b);
}
// Byte shuffle within each 16-byte half (what AVX2's vpshufb does).
KVSCOPE_X86_INLINE IVec iv_shuffle8(IVec a, IVec control) {
  return KVSCOPE_IVEC_2(_mm_shuffle_epi8, a, control);
}
template <int kBits>
IVec iv_srli16(IVec a) {
  return KVSCOPE_IVEC_1(_mm_srli_epi16, a, kBits);
}
template <int kBits>
IVec iv_slli16(IVec a) {
  return KVSCOPE_IVEC_1(_mm_slli_epi16, a, kBits);
}
KVSCOPE_X86_INLINE IVec iv_srl16(IVec a, int bits) {
  return KVSCOPE_IVEC_1(_mm_srl_epi16, a, _mm_cvtsi32_si128(bits));
}
KVSCOPE_X86_INLINE IVec iv_srl32(IVec a, int bits) {
  return KVSCOPE_IVEC_1(_mm_srl_epi32, a, _mm_cvtsi32_si128(bits));
}
// lane j = sum_{k<4} u[4j+k] * s[4j+k] (u unsigned, s signed; maddubs cannot saturate for the
// code ranges the kernels use).
KVSCOPE_X86_INLINE IVec iv_dot_u8s8(IVec u, IVec s) {
  const __m128i ones = _mm_set1_epi16(1);
  return {_mm_madd_epi16(_mm_maddubs_epi16(u.lo, s.lo), ones),
          _mm_madd_epi16(_mm_maddubs_epi16(u.hi, s.hi), ones)};
}
KVSCOPE_X86_INLINE __m256 iv_to_float(IVec a) {
  return _mm256_cvtepi32_ps(_mm256_insertf128_si256(_mm256_castsi128_si256(a.lo), a.hi, 1));
}

#undef KVSCOPE_IVEC_1
#undef KVSCOPE_IVEC_2

// The low 8 bytes of x (unsigned) -> 8 floats.
KVSCOPE_X86_INLINE __m256 u8x8_reg_to_float(__m128i x) {
  return iv_to_float({_mm_cvtepu8_epi32(x), _mm_cvtepu8_epi32(_mm_srli_si128(x, 4))});
}
// 8 bytes (u8, or s8) -> 8 floats.
KVSCOPE_X86_INLINE __m256 u8x8_to_float(const std::uint8_t* p) {
  return u8x8_reg_to_float(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
}
KVSCOPE_X86_INLINE __m256 s8x8_to_float(const std::uint8_t* p) {
  const __m128i x = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
  return iv_to_float({_mm_cvtepi8_epi32(x), _mm_cvtepi8_epi32(_mm_srli_si128(x, 4))});
}

// 4 fp16 in the low 16 bits of each int32 lane -> 4 floats, exactly as F16C converts them:
// the exponent and mantissa moved into float position and scaled by 2^112 (exact for normal
// and subnormal halves alike), infinities and NaNs given the float's all-ones exponent.
KVSCOPE_X86_INLINE __m128 half4_to_float(__m128i h) {
  const __m128i shifted = _mm_slli_epi32(_mm_and_si128(h, _mm_set1_epi32(0x7fff)), 13);
  const __m128 scaled =
      _mm_mul_ps(_mm_castsi128_ps(shifted), _mm_castsi128_ps(_mm_set1_epi32(0x77800000)));
  const __m128i exp = _mm_and_si128(shifted, _mm_set1_epi32(0x0f800000));
  const __m128i special = _mm_cmpeq_epi32(exp, _mm_set1_epi32(0x0f800000));
  const __m128i inf_nan = _mm_or_si128(shifted, _mm_set1_epi32(0x70000000));
  const __m128 magnitude =
      _mm_blendv_ps(scaled, _mm_castsi128_ps(inf_nan), _mm_castsi128_ps(special));
  const __m128i sign = _mm_slli_epi32(_mm_and_si128(h, _mm_set1_epi32(0x8000)), 16);
  return _mm_or_ps(magnitude, _mm_castsi128_ps(sign));
}
// 8 fp16 in x -> 8 floats.
KVSCOPE_X86_INLINE __m256 f16x8_reg_to_float(__m128i x) {
  const __m128 lo = half4_to_float(_mm_cvtepu16_epi32(x));
  const __m128 hi = half4_to_float(_mm_cvtepu16_epi32(_mm_srli_si128(x, 8)));
  return _mm256_insertf128_ps(_mm256_castps128_ps256(lo), hi, 1);
}
KVSCOPE_X86_INLINE __m256 f16x8_to_float(const void* p) {
  return f16x8_reg_to_float(_mm_loadu_si128(static_cast<const __m128i*>(p)));
}
KVSCOPE_X86_INLINE __m256 bf16x8_to_float(const void* p) {
  const __m128i x = _mm_loadu_si128(static_cast<const __m128i*>(p));
  const __m128i lo = _mm_slli_epi32(_mm_cvtepu16_epi32(x), 16);
  const __m128i hi = _mm_slli_epi32(_mm_cvtepu16_epi32(_mm_srli_si128(x, 8)), 16);
  return _mm256_castsi256_ps(_mm256_insertf128_si256(_mm256_castsi128_si256(lo), hi, 1));
}

// 2^n for integral n in [-126, 127], as floats.
KVSCOPE_X86_INLINE __m256 pow2_int(__m256 n) {
  const __m256i ni = _mm256_cvtps_epi32(n);
  const __m128i bias = _mm_set1_epi32(127);
  const __m128i lo = _mm_slli_epi32(_mm_add_epi32(_mm256_castsi256_si128(ni), bias), 23);
  const __m128i hi = _mm_slli_epi32(_mm_add_epi32(_mm256_extractf128_si256(ni, 1), bias), 23);
  return _mm256_castsi256_ps(_mm256_insertf128_si256(_mm256_castsi128_si256(lo), hi, 1));
}

// 8 codes of a two-per-byte row from element i (even), low nibble first, as floats.
KVSCOPE_X86_INLINE __m256 nibbles8_to_float(const std::uint8_t* data, std::int64_t i) {
  std::int32_t four = 0;
  std::memcpy(&four, data + i / 2, 4);
  const __m128i bytes = _mm_cvtsi32_si128(four);
  const __m128i mask = _mm_set1_epi8(0x0f);
  const __m128i lo = _mm_and_si128(bytes, mask);
  const __m128i hi = _mm_and_si128(_mm_srli_epi16(bytes, 4), mask);
  const __m128i codes = _mm_unpacklo_epi8(lo, hi);  // [lo0, hi0, lo1, hi1, ...]
  return iv_to_float({_mm_cvtepu8_epi32(codes), _mm_cvtepu8_epi32(_mm_srli_si128(codes, 4))});
}

// No FMA on AVX-only CPUs: a multiply and an add, two roundings (see quant_dot.h).
KVSCOPE_X86_INLINE __m256 v_fmadd(__m256 a, __m256 b, __m256 c) {
  return _mm256_add_ps(_mm256_mul_ps(a, b), c);
}
KVSCOPE_X86_INLINE float s_fmadd(float a, float b, float c) {
  return a * b + c;  // the file is built with -ffp-contract=off
}

#else  // AVX2 or AVX-512 VNNI

using IVec = __m256i;

KVSCOPE_X86_INLINE IVec iv_load(const void* p) {
  return _mm256_loadu_si256(static_cast<const __m256i*>(p));
}
KVSCOPE_X86_INLINE IVec iv_zero() {
  return _mm256_setzero_si256();
}
KVSCOPE_X86_INLINE IVec iv_halves(__m128i lo, __m128i hi) {
  return _mm256_set_m128i(hi, lo);
}
KVSCOPE_X86_INLINE IVec iv_set1_8(char v) {
  return _mm256_set1_epi8(v);
}
KVSCOPE_X86_INLINE IVec iv_set1_16(short v) {
  return _mm256_set1_epi16(v);
}
KVSCOPE_X86_INLINE IVec iv_set1_32(int v) {
  return _mm256_set1_epi32(v);
}
KVSCOPE_X86_INLINE IVec iv_set1_64(long long v) {
  return _mm256_set1_epi64x(v);
}
KVSCOPE_X86_INLINE IVec iv_bytes16(char b0, char b1, char b2, char b3, char b4, char b5, char b6,
                                   char b7, char b8, char b9, char b10, char b11, char b12,
                                   char b13, char b14, char b15) {
  return _mm256_setr_epi8(b0, b1, b2, b3, b4, b5, b6, b7, b8, b9, b10, b11, b12, b13, b14, b15, b0,
                          b1, b2, b3, b4, b5, b6, b7, b8, b9, b10, b11, b12, b13, b14, b15);
}
KVSCOPE_X86_INLINE IVec iv_and(IVec a, IVec b) {
  return _mm256_and_si256(a, b);
}
KVSCOPE_X86_INLINE IVec iv_or(IVec a, IVec b) {
  return _mm256_or_si256(a, b);
}
KVSCOPE_X86_INLINE IVec iv_xor(IVec a, IVec b) {
  return _mm256_xor_si256(a, b);
}
KVSCOPE_X86_INLINE IVec iv_sub8(IVec a, IVec b) {
  return _mm256_sub_epi8(a, b);
}
KVSCOPE_X86_INLINE IVec iv_add32(IVec a, IVec b) {
  return _mm256_add_epi32(a, b);
}
KVSCOPE_X86_INLINE IVec iv_cmpeq8(IVec a, IVec b) {
  return _mm256_cmpeq_epi8(a, b);
}
KVSCOPE_X86_INLINE IVec iv_sign8(IVec a, IVec b) {
  return _mm256_sign_epi8(a, b);
}
KVSCOPE_X86_INLINE IVec iv_shuffle8(IVec a, IVec control) {
  return _mm256_shuffle_epi8(a, control);
}
template <int kBits>
IVec iv_srli16(IVec a) {
  return _mm256_srli_epi16(a, kBits);
}
template <int kBits>
IVec iv_slli16(IVec a) {
  return _mm256_slli_epi16(a, kBits);
}
KVSCOPE_X86_INLINE IVec iv_srl16(IVec a, int bits) {
  return _mm256_srl_epi16(a, _mm_cvtsi32_si128(bits));
}
KVSCOPE_X86_INLINE IVec iv_srl32(IVec a, int bits) {
  return _mm256_srl_epi32(a, _mm_cvtsi32_si128(bits));
}
KVSCOPE_X86_INLINE IVec iv_dot_u8s8(IVec u, IVec s) {
#if KVSCOPE_X86_VNNI
  return _mm256_dpbusd_epi32(_mm256_setzero_si256(), u, s);
#else
  return _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), _mm256_set1_epi16(1));
#endif
}
KVSCOPE_X86_INLINE __m256 iv_to_float(IVec a) {
  return _mm256_cvtepi32_ps(a);
}

KVSCOPE_X86_INLINE __m256 u8x8_reg_to_float(__m128i x) {
  return _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(x));
}
KVSCOPE_X86_INLINE __m256 u8x8_to_float(const std::uint8_t* p) {
  return u8x8_reg_to_float(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
}
KVSCOPE_X86_INLINE __m256 s8x8_to_float(const std::uint8_t* p) {
  return _mm256_cvtepi32_ps(
      _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))));
}
KVSCOPE_X86_INLINE __m256 f16x8_reg_to_float(__m128i x) {
  return _mm256_cvtph_ps(x);
}
KVSCOPE_X86_INLINE __m256 f16x8_to_float(const void* p) {
  return f16x8_reg_to_float(_mm_loadu_si128(static_cast<const __m128i*>(p)));
}
KVSCOPE_X86_INLINE __m256 bf16x8_to_float(const void* p) {
  const __m256i wide = _mm256_cvtepu16_epi32(_mm_loadu_si128(static_cast<const __m128i*>(p)));
  return _mm256_castsi256_ps(_mm256_slli_epi32(wide, 16));
}

KVSCOPE_X86_INLINE __m256 pow2_int(__m256 n) {
  const __m256i e = _mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127));
  return _mm256_castsi256_ps(_mm256_slli_epi32(e, 23));
}

KVSCOPE_X86_INLINE __m256 nibbles8_to_float(const std::uint8_t* data, std::int64_t i) {
  std::int32_t four = 0;
  std::memcpy(&four, data + i / 2, 4);
  const __m128i bytes = _mm_cvtsi32_si128(four);
  const __m128i mask = _mm_set1_epi8(0x0f);
  const __m128i lo = _mm_and_si128(bytes, mask);
  const __m128i hi = _mm_and_si128(_mm_srli_epi16(bytes, 4), mask);
  return _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_unpacklo_epi8(lo, hi)));
}

KVSCOPE_X86_INLINE __m256 v_fmadd(__m256 a, __m256 b, __m256 c) {
  return _mm256_fmadd_ps(a, b, c);
}
KVSCOPE_X86_INLINE float s_fmadd(float a, float b, float c) {
  return std::fma(a, b, c);
}

#endif

// sum + the dot products of 4 codes per lane (VNNI: in one instruction).
KVSCOPE_X86_INLINE IVec iv_dot_add(IVec sum, IVec u, IVec s) {
#if KVSCOPE_X86_VNNI
  return _mm256_dpbusd_epi32(sum, u, s);
#else
  return iv_add32(sum, iv_dot_u8s8(u, s));
#endif
}

// 4 bytes broadcast to every int32 lane.
KVSCOPE_X86_INLINE IVec iv_broadcast4(const std::int8_t* q) {
  std::int32_t v;
  std::memcpy(&v, q, 4);
  return iv_set1_32(v);
}

}  // namespace
}  // namespace kvscope::x86
