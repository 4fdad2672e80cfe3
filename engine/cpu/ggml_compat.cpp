#include "cpu/ggml_compat.h"

#include <cmath>
#include <limits>

#include "cpu/simd_dispatch.h"
#include "util/error.h"

// Every float operation below is written in the order ggml performs it; fused only where
// ggml fuses (std::fma / fmadd). engine/CMakeLists.txt builds this file with
// -ffp-contract=off so that the compiler fuses nothing else.

#if KVSCOPE_X86_SIMD
#include <immintrin.h>
#endif

namespace kvscope {

namespace {

// --- portable versions ------------------------------------------------------------------

// The scalar leftovers of ggml_vec_dot_f32 from `from` to n, added to sum in order.
float dot_tail(const float* x, const float* y, std::int64_t from, std::int64_t n, float sum) {
  const std::int64_t split = from + ((n - from) & ~std::int64_t{7});
  std::int64_t i = from;
  for (; i < split; ++i) sum += x[i] * y[i];
  for (; i < n; ++i) sum = std::fma(x[i], y[i], sum);
  return sum;
}

float dot_portable(const float* x, const float* y, std::int64_t n) {
  const std::int64_t np = n & ~std::int64_t{63};
  float acc[4][16] = {};  // GGML_F32_ARR x GGML_F32_EPR
  for (std::int64_t i = 0; i < np; i += 64) {
    for (int j = 0; j < 4; ++j) {
      for (int l = 0; l < 16; ++l) {
        acc[j][l] = std::fma(x[i + 16 * j + l], y[i + 16 * j + l], acc[j][l]);
      }
    }
  }
  for (int l = 0; l < 16; ++l) {
    acc[0][l] += acc[2][l];
    acc[1][l] += acc[3][l];
  }
  for (int l = 0; l < 16; ++l) acc[0][l] += acc[1][l];
  return dot_tail(x, y, np, n, ggml_reduce16(acc[0]));
}

float sgemm_dot_portable(const float* x, const float* y, std::int64_t n) {
  float acc[16] = {};
  for (std::int64_t i = 0; i < n; i += 16) {
    for (int l = 0; l < 16; ++l) acc[l] = std::fma(x[i + l], y[i + l], acc[l]);
  }
  return ggml_reduce16(acc);
}

// x / (1 + e^-x) with ggml's vector exponential.
float v_silu(float x) {
  return x / (1.0f + ggml_v_expf(0.0f - x));
}

void swiglu_portable(const float* gate, const float* up, float* out, std::int64_t n) {
  std::int64_t i = 0;
  for (; i + 15 < n; i += 16) {
    for (int l = 0; l < 16; ++l) out[i + l] = v_silu(gate[i + l]) * up[i + l];
  }
  for (; i < n; ++i) out[i] = (gate[i] / (1.0f + std::exp(-gate[i]))) * up[i];
}

// The argument of GELU(tanh)'s logistic: 0.5 (1 + tanh(z)) = 1 / (1 + e^(-2z)) with
// z = sqrt(2/pi) (x + 0.044715 x^3), so gelu(x) = x / (1 + e^(-u)), u = 2z.
constexpr float kGeluA = 1.5957691216057308f;  // 2 sqrt(2 / pi)
constexpr float kGeluB = 0.044715f;

float gelu_arg(float x) {
  return kGeluA * x * (1.0f + kGeluB * x * x);
}

void geglu_portable(const float* gate, const float* up, float* out, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) {
    out[i] = gate[i] / (1.0f + ggml_v_expf(0.0f - gelu_arg(gate[i]))) * up[i];
  }
}

// --- AVX2 + FMA versions: 16 lanes as two 8-lane halves ----------------------------------

#if KVSCOPE_X86_SIMD

KVSCOPE_TARGET_AVX2 inline float reduce16_avx2(__m256 lo, __m256 hi) {
  const __m256 t8 = _mm256_add_ps(hi, lo);
  const __m128 t4 = _mm_add_ps(_mm256_extractf128_ps(t8, 1), _mm256_castps256_ps128(t8));
  const __m128 t2 = _mm_add_ps(t4, _mm_movehl_ps(t4, t4));  // [l0 + l2, l1 + l3, ..]
  return _mm_cvtss_f32(_mm_add_ss(t2, _mm_movehdup_ps(t2)));
}

// ggml_vec_dot_f32 up to the scalar leftovers: the 4 x 16-lane part (accumulator j, half h
// in a{j}{h}), reduced. np % 64 == 0.
KVSCOPE_TARGET_AVX2 inline float dot_head_avx2(const float* x, const float* y, std::int64_t np) {
  __m256 a00 = _mm256_setzero_ps(), a01 = a00, a10 = a00, a11 = a00;
  __m256 a20 = a00, a21 = a00, a30 = a00, a31 = a00;
  for (std::int64_t i = 0; i < np; i += 64, x += 64, y += 64) {
    a00 = _mm256_fmadd_ps(_mm256_loadu_ps(x), _mm256_loadu_ps(y), a00);
    a01 = _mm256_fmadd_ps(_mm256_loadu_ps(x + 8), _mm256_loadu_ps(y + 8), a01);
    a10 = _mm256_fmadd_ps(_mm256_loadu_ps(x + 16), _mm256_loadu_ps(y + 16), a10);
    a11 = _mm256_fmadd_ps(_mm256_loadu_ps(x + 24), _mm256_loadu_ps(y + 24), a11);
    a20 = _mm256_fmadd_ps(_mm256_loadu_ps(x + 32), _mm256_loadu_ps(y + 32), a20);
    a21 = _mm256_fmadd_ps(_mm256_loadu_ps(x + 40), _mm256_loadu_ps(y + 40), a21);
    a30 = _mm256_fmadd_ps(_mm256_loadu_ps(x + 48), _mm256_loadu_ps(y + 48), a30);
    a31 = _mm256_fmadd_ps(_mm256_loadu_ps(x + 56), _mm256_loadu_ps(y + 56), a31);
  }
  // GGML_F32x16_REDUCE: (acc0 + acc2) + (acc1 + acc3), lane by lane
  const __m256 lo = _mm256_add_ps(_mm256_add_ps(a00, a20), _mm256_add_ps(a10, a30));
  const __m256 hi = _mm256_add_ps(_mm256_add_ps(a01, a21), _mm256_add_ps(a11, a31));
  return reduce16_avx2(lo, hi);
}

KVSCOPE_TARGET_AVX2 inline float dot_avx2(const float* x, const float* y, std::int64_t n) {
  const std::int64_t np = n & ~std::int64_t{63};
  float sum = dot_head_avx2(x, y, np);
  const std::int64_t split = np + ((n - np) & ~std::int64_t{7});
  std::int64_t i = np;
  for (; i < split; ++i) sum += x[i] * y[i];
  for (; i < n; ++i) sum = std::fma(x[i], y[i], sum);
  return sum;
}

// ggml_dot_f32 for 8 rows of w at once: the heads one row at a time, then the leftovers of
// all 8 rows side by side (lane r = row r, each lane still summed in column order), which
// turns 8 serial chains into one. w: [8][cols]; y: [8].
KVSCOPE_TARGET_AVX2 void dot8_avx2(const float* w, std::int64_t cols, const float* x, float* y) {
  const std::int64_t np = cols & ~std::int64_t{63};
  alignas(32) float heads[8];
  for (int r = 0; r < 8; ++r) heads[r] = dot_head_avx2(w + r * cols, x, np);
  __m256 sum = _mm256_load_ps(heads);
  const std::int64_t split = np + ((cols - np) & ~std::int64_t{7});
  const __m256i rows = _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
                                          _mm256_set1_epi32(static_cast<int>(cols)));
  std::int64_t i = np;
  for (; i < split; ++i) {  // product rounded, then added
    sum = _mm256_add_ps(sum,
                        _mm256_mul_ps(_mm256_i32gather_ps(w + i, rows, 4), _mm256_set1_ps(x[i])));
  }
  for (; i < cols; ++i) {  // fused
    sum = _mm256_fmadd_ps(_mm256_i32gather_ps(w + i, rows, 4), _mm256_set1_ps(x[i]), sum);
  }
  _mm256_storeu_ps(y, sum);
}

KVSCOPE_TARGET_AVX2 inline float sgemm_dot_avx2(const float* x, const float* y, std::int64_t n) {
  __m256 lo = _mm256_setzero_ps(), hi = _mm256_setzero_ps();
  for (std::int64_t i = 0; i < n; i += 16) {
    lo = _mm256_fmadd_ps(_mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i), lo);
    hi = _mm256_fmadd_ps(_mm256_loadu_ps(x + i + 8), _mm256_loadu_ps(y + i + 8), hi);
  }
  return reduce16_avx2(lo, hi);
}

KVSCOPE_TARGET_AVX2 void mat_vec_avx2(const float* w, std::int64_t rows, std::int64_t cols,
                                      const float* x, float* y, bool sgemm) {
  std::int64_t r = 0;
  if (sgemm) {
    for (; r < rows; ++r) y[r] = sgemm_dot_avx2(w + r * cols, x, cols);
    return;
  }
  const bool has_tail = (cols & 63) != 0 && cols * 8 < (std::int64_t{1} << 31);
  if (has_tail) {
    for (; r + 8 <= rows; r += 8) dot8_avx2(w + r * cols, cols, x, y + r);
  }
  for (; r < rows; ++r) y[r] = dot_avx2(w + r * cols, x, cols);
}

// ggml_v_expf (the __m512 version) on 8 lanes; lanes whose |n| > 126 (|x| > 87, where 2^n
// is not a normal float) are redone one by one.
KVSCOPE_TARGET_AVX2 __m256 v_expf_avx2(__m256 x) {
  const __m256 r = _mm256_set1_ps(0x1.8p23f);
  const __m256 z = _mm256_fmadd_ps(x, _mm256_set1_ps(0x1.715476p+0f), r);
  const __m256 n = _mm256_sub_ps(z, r);
  const __m256 b = _mm256_fnmadd_ps(n, _mm256_set1_ps(0x1.7f7d1cp-20f),
                                    _mm256_fnmadd_ps(n, _mm256_set1_ps(0x1.62e4p-1f), x));
  const __m256 u = _mm256_mul_ps(b, b);
  const __m256 j = _mm256_fmadd_ps(
      _mm256_fmadd_ps(
          _mm256_fmadd_ps(_mm256_set1_ps(0x1.0e4020p-7f), b, _mm256_set1_ps(0x1.573e2ep-5f)), u,
          _mm256_fmadd_ps(_mm256_set1_ps(0x1.555e66p-3f), b, _mm256_set1_ps(0x1.fffdb6p-2f))),
      u, _mm256_fmadd_ps(_mm256_set1_ps(0x1.ffffecp-1f), b, _mm256_set1_ps(1.0f)));
  const __m256 abs_n = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), n);
  if (_mm256_movemask_ps(_mm256_cmp_ps(abs_n, _mm256_set1_ps(126.0f), _CMP_NLE_UQ)) != 0) {
    alignas(32) float lanes[8];
    _mm256_store_ps(lanes, x);
    for (float& v : lanes) v = ggml_v_expf(v);
    return _mm256_load_ps(lanes);
  }
  // scalef(j, n) = j * 2^n: with 2^n a normal float the product rounds once, as scalef does
  const __m256i e =
      _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  return _mm256_mul_ps(j, _mm256_castsi256_ps(e));
}

KVSCOPE_TARGET_AVX2 void swiglu_avx2(const float* gate, const float* up, float* out,
                                     std::int64_t n) {
  const __m256 one = _mm256_set1_ps(1.0f);
  std::int64_t i = 0;
  for (; i + 15 < n; i += 16) {
    for (int h = 0; h < 16; h += 8) {
      const __m256 x = _mm256_loadu_ps(gate + i + h);
      const __m256 g = _mm256_loadu_ps(up + i + h);
      const __m256 e = v_expf_avx2(_mm256_sub_ps(_mm256_setzero_ps(), x));
      const __m256 silu = _mm256_div_ps(x, _mm256_add_ps(one, e));
      _mm256_storeu_ps(out + i + h, _mm256_mul_ps(silu, g));
    }
  }
  for (; i < n; ++i) out[i] = (gate[i] / (1.0f + std::exp(-gate[i]))) * up[i];
}

KVSCOPE_TARGET_AVX2 void geglu_avx2(const float* gate, const float* up, float* out,
                                    std::int64_t n) {
  const __m256 one = _mm256_set1_ps(1.0f), a = _mm256_set1_ps(kGeluA), b = _mm256_set1_ps(kGeluB);
  std::int64_t i = 0;
  for (; i + 7 < n; i += 8) {
    const __m256 x = _mm256_loadu_ps(gate + i);
    const __m256 u =
        _mm256_mul_ps(_mm256_mul_ps(a, x), _mm256_fmadd_ps(_mm256_mul_ps(b, x), x, one));
    const __m256 e = v_expf_avx2(_mm256_sub_ps(_mm256_setzero_ps(), u));
    const __m256 gelu = _mm256_div_ps(x, _mm256_add_ps(one, e));
    _mm256_storeu_ps(out + i, _mm256_mul_ps(gelu, _mm256_loadu_ps(up + i)));
  }
  geglu_portable(gate + i, up + i, out + i, n - i);
}

// AVX alone (no FMA, no 256-bit integers): v_expf_avx2 with each fused multiply-add a multiply
// and an add, as ggml built for such a CPU computes it; 2^n from two 128-bit halves.
KVSCOPE_TARGET_AVX inline __m256 mul_add_avx(__m256 a, __m256 b, __m256 c) {
  return _mm256_add_ps(_mm256_mul_ps(a, b), c);
}
KVSCOPE_TARGET_AVX inline __m256 neg_mul_add_avx(__m256 a, __m256 b, __m256 c) {
  return _mm256_sub_ps(c, _mm256_mul_ps(a, b));
}

KVSCOPE_TARGET_AVX __m256 v_expf_avx(__m256 x) {
  const __m256 r = _mm256_set1_ps(0x1.8p23f);
  const __m256 z = mul_add_avx(x, _mm256_set1_ps(0x1.715476p+0f), r);
  const __m256 n = _mm256_sub_ps(z, r);
  const __m256 b = neg_mul_add_avx(n, _mm256_set1_ps(0x1.7f7d1cp-20f),
                                   neg_mul_add_avx(n, _mm256_set1_ps(0x1.62e4p-1f), x));
  const __m256 u = _mm256_mul_ps(b, b);
  const __m256 j = mul_add_avx(
      mul_add_avx(mul_add_avx(_mm256_set1_ps(0x1.0e4020p-7f), b, _mm256_set1_ps(0x1.573e2ep-5f)), u,
                  mul_add_avx(_mm256_set1_ps(0x1.555e66p-3f), b, _mm256_set1_ps(0x1.fffdb6p-2f))),
      u, mul_add_avx(_mm256_set1_ps(0x1.ffffecp-1f), b, _mm256_set1_ps(1.0f)));
  const __m256 abs_n = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), n);
  if (_mm256_movemask_ps(_mm256_cmp_ps(abs_n, _mm256_set1_ps(126.0f), _CMP_NLE_UQ)) != 0) {
    alignas(32) float lanes[8];
    _mm256_store_ps(lanes, x);
    for (float& v : lanes) v = std::exp(v);
    return _mm256_load_ps(lanes);
  }
  const __m256i ni = _mm256_cvtps_epi32(n);
  const __m128i bias = _mm_set1_epi32(127);
  const __m128i lo = _mm_slli_epi32(_mm_add_epi32(_mm256_castsi256_si128(ni), bias), 23);
  const __m128i hi = _mm_slli_epi32(_mm_add_epi32(_mm256_extractf128_si256(ni, 1), bias), 23);
  const __m256i e = _mm256_insertf128_si256(_mm256_castsi128_si256(lo), hi, 1);
  return _mm256_mul_ps(j, _mm256_castsi256_ps(e));
}

KVSCOPE_TARGET_AVX void swiglu_avx(const float* gate, const float* up, float* out, std::int64_t n) {
  const __m256 one = _mm256_set1_ps(1.0f);
  std::int64_t i = 0;
  for (; i + 7 < n; i += 8) {
    const __m256 x = _mm256_loadu_ps(gate + i);
    const __m256 e = v_expf_avx(_mm256_sub_ps(_mm256_setzero_ps(), x));
    const __m256 silu = _mm256_div_ps(x, _mm256_add_ps(one, e));
    _mm256_storeu_ps(out + i, _mm256_mul_ps(silu, _mm256_loadu_ps(up + i)));
  }
  for (; i < n; ++i) out[i] = (gate[i] / (1.0f + std::exp(-gate[i]))) * up[i];
}

#endif  // KVSCOPE_X86_SIMD

}  // namespace

float ggml_dot_f32(const float* x, const float* y, std::int64_t n) {
#if KVSCOPE_X86_SIMD
  if (use_avx2_fma_f16c()) return dot_avx2(x, y, n);
#endif
  return dot_portable(x, y, n);
}

float ggml_sgemm_dot_f32(const float* x, const float* y, std::int64_t n) {
  if (n % 16 != 0) {
    throw_error<UsageError>("ggml_sgemm_dot_f32: {} values, the sgemm needs a multiple of 16", n);
  }
#if KVSCOPE_X86_SIMD
  if (use_avx2_fma_f16c()) return sgemm_dot_avx2(x, y, n);
#endif
  return sgemm_dot_portable(x, y, n);
}

bool ggml_mul_mat_uses_sgemm(std::int64_t rows, std::int64_t cols, std::int64_t n_tokens) {
  return n_tokens >= 2 && cols % 16 == 0 && rows % 4 == 0;
}

void ggml_mat_vec_f32(const float* w, std::int64_t rows, std::int64_t cols, const float* x,
                      float* y, bool sgemm) {
  if (sgemm && cols % 16 != 0) {
    throw_error<UsageError>("ggml_mat_vec_f32: {} columns, the sgemm needs a multiple of 16", cols);
  }
#if KVSCOPE_X86_SIMD
  if (use_avx2_fma_f16c()) return mat_vec_avx2(w, rows, cols, x, y, sgemm);
#endif
  for (std::int64_t r = 0; r < rows; ++r) {
    y[r] = sgemm ? sgemm_dot_portable(w + r * cols, x, cols) : dot_portable(w + r * cols, x, cols);
  }
}

float ggml_rope_theta_scale(float freq_base, std::int64_t rope_dim) {
  return std::pow(freq_base, -2.0f / static_cast<float>(rope_dim));
}

void ggml_rope_angles(std::int64_t pos, float theta_scale, float freq_scale,
                      std::span<const float> freq_factors, std::span<float> cos,
                      std::span<float> sin) {
  if (cos.size() != sin.size() || (!freq_factors.empty() && freq_factors.size() != cos.size())) {
    throw_error<UsageError>("ggml_rope_angles: cos/sin/factors hold {}/{}/{} values", cos.size(),
                            sin.size(), freq_factors.size());
  }
  float theta = static_cast<float>(pos);
  for (std::size_t i = 0; i < cos.size(); ++i) {
    const float ff = freq_factors.empty() ? 1.0f : freq_factors[i];
    const float angle = freq_scale * (theta / ff);
    cos[i] = std::cos(angle);
    sin[i] = std::sin(angle);
    theta *= theta_scale;
  }
}

void ggml_rope_rotate(float& x0, float& x1, float cos, float sin) {
  const float a = x0, b = x1;
  x0 = std::fma(a, cos, -(b * sin));
  x1 = std::fma(a, sin, b * cos);
}

void ggml_rope_rotate_unfused(float& x0, float& x1, float cos, float sin) {
  const float a = x0, b = x1;
  x0 = a * cos - b * sin;
  x1 = a * sin + b * cos;
}

void ggml_swiglu_row(const float* gate, const float* up, float* out, std::int64_t n) {
#if KVSCOPE_X86_SIMD
  if (use_avx2_fma_f16c()) return swiglu_avx2(gate, up, out, n);
  if (use_avx()) return swiglu_avx(gate, up, out, n);
#endif
  swiglu_portable(gate, up, out, n);
}

void geglu_row(const float* gate, const float* up, float* out, std::int64_t n) {
#if KVSCOPE_X86_SIMD
  if (use_avx2_fma_f16c()) return geglu_avx2(gate, up, out, n);
#endif
  geglu_portable(gate, up, out, n);
}

float ggml_v_expf(float x) {
  const float r = 0x1.8p23f;
  const float z = std::fma(x, 0x1.715476p+0f, r);
  const float n = z - r;
  const float b = std::fma(-n, 0x1.7f7d1cp-20f, std::fma(-n, 0x1.62e4p-1f, x));
  const float u = b * b;
  const float j = std::fma(std::fma(std::fma(0x1.0e4020p-7f, b, 0x1.573e2ep-5f), u,
                                    std::fma(0x1.555e66p-3f, b, 0x1.fffdb6p-2f)),
                           u, std::fma(0x1.ffffecp-1f, b, 1.0f));
  if (std::isnan(n)) return n;
  if (std::fabs(n) > 192.0f) return n <= 0.0f ? 0.0f : std::numeric_limits<float>::infinity();
  return std::ldexp(j, static_cast<int>(n));  // _mm512_scalef_ps: j * 2^n, rounded once
}

// _mm512_reduce_add_ps as GCC defines it: upper 8 + lower 8, upper 4 + lower 4, then
// (l0 + l2) + (l1 + l3). v: [16].
float ggml_reduce16(const float* v) {
  float t8[8], t4[4];
  for (int k = 0; k < 8; ++k) t8[k] = v[k + 8] + v[k];
  for (int k = 0; k < 4; ++k) t4[k] = t8[k + 4] + t8[k];
  return (t4[0] + t4[2]) + (t4[1] + t4[3]);
}

}  // namespace kvscope
