#include "cpu/attention/ggml_flash_attn.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "cpu/ggml_compat.h"
#include "cpu/simd_dispatch.h"
#include "util/half.h"

// Every float operation below is written in the order ggml performs it; fused only where
// ggml fuses (std::fma / fmadd). engine/CMakeLists.txt builds this file with
// -ffp-contract=off so that the compiler fuses nothing else.

#if KVSCOPE_X86_SIMD
#include <immintrin.h>
#endif

namespace kvscope {

namespace {

float dot_f16_portable(const std::uint16_t* k, const std::uint16_t* q, std::int64_t n) {
  const std::int64_t np = n & ~std::int64_t{63};
  double sum = 0.0;
  if (np > 0) {
    float acc[4][16] = {};
    for (std::int64_t i = 0; i < np; i += 64) {
      for (int j = 0; j < 4; ++j) {
        for (int l = 0; l < 16; ++l) {
          const std::int64_t at = i + 16 * j + l;
          acc[j][l] = std::fma(fp16_to_float(k[at]), fp16_to_float(q[at]), acc[j][l]);
        }
      }
    }
    for (int l = 0; l < 16; ++l) {
      acc[0][l] += acc[2][l];
      acc[1][l] += acc[3][l];
    }
    for (int l = 0; l < 16; ++l) acc[0][l] += acc[1][l];
    sum = ggml_reduce16(acc[0]);
  }
  for (std::int64_t i = np; i < n; ++i) {
    sum += static_cast<double>(fp16_to_float(k[i]) * fp16_to_float(q[i]));
  }
  return static_cast<float>(sum);
}

// ggml's soft-cap of the scores of n keys, each already multiplied by scale / softcap:
// s = softcap * tanhf(s). softcap 0: unchanged.
void cap_scores(float* s, std::int64_t n, float softcap) {
  if (softcap == 0.0f) return;
  for (std::int64_t i = 0; i < n; ++i) s[i] = softcap * std::tanh(s[i]);
}

void keys_portable(const std::uint16_t* k, const std::uint16_t* v, std::int64_t stride,
                   std::int64_t n_keys, std::int64_t hd, float scale, float softcap,
                   const std::uint16_t* q16, std::uint16_t* acc, GgmlFlashHead* state,
                   std::int64_t n_heads) {
  for (std::int64_t key = 0; key < n_keys; ++key, k += stride, v += stride) {
    for (std::int64_t h = 0; h < n_heads; ++h) {
      GgmlFlashHead& st = state[h];
      std::uint16_t* a = acc + h * hd;
      float s = dot_f16_portable(k, q16 + h * hd, hd) * scale;
      cap_scores(&s, 1, softcap);
      float ms = 1.0f, vs = 1.0f;
      if (s > st.max) {
        ms = std::exp(st.max - s);
        st.max = s;
        for (std::int64_t i = 0; i < hd; ++i) a[i] = float_to_fp16(fp16_to_float(a[i]) * ms);
      } else {
        vs = std::exp(s - st.max);
      }
      for (std::int64_t i = 0; i < hd; ++i) {
        a[i] = float_to_fp16(std::fma(fp16_to_float(v[i]), vs, fp16_to_float(a[i])));
      }
      st.sum = std::fma(st.sum, ms, vs);
    }
  }
}

#if KVSCOPE_X86_SIMD

KVSCOPE_TARGET_AVX2 __m256 load8_f16(const std::uint16_t* p) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}

KVSCOPE_TARGET_AVX2 void store8_f16(std::uint16_t* p, __m256 x) {
  _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT));
}

KVSCOPE_TARGET_AVX2 float dot_f16_avx2(const std::uint16_t* k, const std::uint16_t* q,
                                       std::int64_t n) {
  const std::int64_t np = n & ~std::int64_t{63};
  double sum = 0.0;
  if (np > 0) {
    __m256 acc[4][2];
    for (auto& a : acc) a[0] = a[1] = _mm256_setzero_ps();
    for (std::int64_t i = 0; i < np; i += 64) {
      for (int j = 0; j < 4; ++j) {
        for (int h = 0; h < 2; ++h) {
          const std::int64_t at = i + 16 * j + 8 * h;
          acc[j][h] = _mm256_fmadd_ps(load8_f16(k + at), load8_f16(q + at), acc[j][h]);
        }
      }
    }
    alignas(32) float lanes[16];
    for (int h = 0; h < 2; ++h) {
      const __m256 a = _mm256_add_ps(acc[0][h], acc[2][h]);
      const __m256 b = _mm256_add_ps(acc[1][h], acc[3][h]);
      _mm256_store_ps(lanes + 8 * h, _mm256_add_ps(a, b));
    }
    sum = ggml_reduce16(lanes);
  }
  std::int64_t i = np;
  alignas(32) float prod[8];
  for (; i + 8 <= n; i += 8) {  // products of fp16 values are exact in float
    _mm256_store_ps(prod, _mm256_mul_ps(load8_f16(k + i), load8_f16(q + i)));
    for (const float p : prod) sum += static_cast<double>(p);
  }
  for (; i < n; ++i) sum += static_cast<double>(fp16_to_float(k[i]) * fp16_to_float(q[i]));
  return static_cast<float>(sum);
}

// acc = fp16(acc * ms) and then acc = fp16(fma(v, vs, acc)), 8 values at a time.
KVSCOPE_TARGET_AVX2 void update_acc_avx2(std::uint16_t* a, const std::uint16_t* v, std::int64_t hd,
                                         bool rescale, float ms, float vs) {
  std::int64_t i = 0;
  for (; i + 8 <= hd; i += 8) {
    __m256 y = load8_f16(a + i);
    if (rescale) {  // ggml_vec_scale_f16: the rescaled accumulator is fp16 again
      y = _mm256_cvtph_ps(
          _mm256_cvtps_ph(_mm256_mul_ps(y, _mm256_set1_ps(ms)), _MM_FROUND_TO_NEAREST_INT));
    }
    store8_f16(a + i, _mm256_fmadd_ps(load8_f16(v + i), _mm256_set1_ps(vs), y));
  }
  for (; i < hd; ++i) {
    if (rescale) a[i] = float_to_fp16(fp16_to_float(a[i]) * ms);
    a[i] = float_to_fp16(std::fma(fp16_to_float(v[i]), vs, fp16_to_float(a[i])));
  }
}

// Scores of 4 consecutive keys for head_dim 8: the 4 x 8 products (exact in float) are
// transposed so that lane j sums key j's products in index order in double, exactly as
// ggml_vec_dot_f16's scalar loop does, 4 keys at a time. out: [4].
KVSCOPE_TARGET_AVX2 void scores4_hd8(const std::uint16_t* k, std::int64_t stride, __m256 q,
                                     float scale, float* out) {
  const __m256 p0 = _mm256_mul_ps(load8_f16(k), q);
  const __m256 p1 = _mm256_mul_ps(load8_f16(k + stride), q);
  const __m256 p2 = _mm256_mul_ps(load8_f16(k + 2 * stride), q);
  const __m256 p3 = _mm256_mul_ps(load8_f16(k + 3 * stride), q);
  const __m256 t0 = _mm256_unpacklo_ps(p0, p1), t1 = _mm256_unpackhi_ps(p0, p1);
  const __m256 t2 = _mm256_unpacklo_ps(p2, p3), t3 = _mm256_unpackhi_ps(p2, p3);
  // column i of the products sits in lane group (i % 4) of c[i % 4], half i / 4
  const __m256 c[4] = {_mm256_shuffle_ps(t0, t2, 0x44), _mm256_shuffle_ps(t0, t2, 0xEE),
                       _mm256_shuffle_ps(t1, t3, 0x44), _mm256_shuffle_ps(t1, t3, 0xEE)};
  __m256d sum = _mm256_setzero_pd();
  for (int i = 0; i < 4; ++i)
    sum = _mm256_add_pd(sum, _mm256_cvtps_pd(_mm256_castps256_ps128(c[i])));
  for (int i = 0; i < 4; ++i)
    sum = _mm256_add_pd(sum, _mm256_cvtps_pd(_mm256_extractf128_ps(c[i], 1)));
  _mm_storeu_ps(out, _mm_mul_ps(_mm256_cvtpd_ps(sum), _mm_set1_ps(scale)));
}

// s[key] = score of each of n (<= kChunk) keys for one head.
KVSCOPE_TARGET_AVX2 void scores_avx2(const std::uint16_t* k, std::int64_t stride, std::int64_t n,
                                     std::int64_t hd, float scale, const std::uint16_t* q16,
                                     float* s) {
  std::int64_t key = 0;
  if (hd == 8) {
    const __m256 q = load8_f16(q16);
    for (; key + 4 <= n; key += 4) scores4_hd8(k + key * stride, stride, q, scale, s + key);
  }
  for (; key < n; ++key) s[key] = dot_f16_avx2(k + key * stride, q16, hd) * scale;
}

constexpr std::int64_t kChunk = 32;  // keys scored ahead of the (serial) softmax updates

// One softmax step of one head for head_dim 8 with the fp16 accumulator held in a register
// as floats (every value fp16-representable, so rounding it again changes nothing).
KVSCOPE_TARGET_AVX2 inline void step_hd8(GgmlFlashHead& st, float s, __m256 v, __m256& y) {
  float ms = 1.0f, vs = 1.0f;
  if (s > st.max) {
    ms = std::exp(st.max - s);
    st.max = s;
    y = _mm256_cvtph_ps(
        _mm256_cvtps_ph(_mm256_mul_ps(y, _mm256_set1_ps(ms)), _MM_FROUND_TO_NEAREST_INT));
  } else {
    vs = std::exp(s - st.max);
  }
  y = _mm256_cvtph_ps(
      _mm256_cvtps_ph(_mm256_fmadd_ps(v, _mm256_set1_ps(vs), y), _MM_FROUND_TO_NEAREST_INT));
  st.sum = std::fma(st.sum, ms, vs);
}

// keys_avx2 for head_dim 8: two heads at a time, so their (serial) accumulator chains
// overlap; scores of a chunk of keys first, then the updates in key order.
KVSCOPE_TARGET_AVX2 void keys_hd8_avx2(const std::uint16_t* k, const std::uint16_t* v,
                                       std::int64_t stride, std::int64_t n_keys, float scale,
                                       float softcap, const std::uint16_t* q16, std::uint16_t* acc,
                                       GgmlFlashHead* state, std::int64_t n_heads) {
  float s0[kChunk], s1[kChunk];
  for (std::int64_t h = 0; h < n_heads; h += 2) {
    const bool pair = h + 1 < n_heads;
    __m256 y0 = load8_f16(acc + h * 8);
    __m256 y1 = pair ? load8_f16(acc + (h + 1) * 8) : _mm256_setzero_ps();
    for (std::int64_t k0 = 0; k0 < n_keys; k0 += kChunk) {
      const std::int64_t n = std::min(kChunk, n_keys - k0);
      scores_avx2(k + k0 * stride, stride, n, 8, scale, q16 + h * 8, s0);
      cap_scores(s0, n, softcap);
      if (pair) {
        scores_avx2(k + k0 * stride, stride, n, 8, scale, q16 + (h + 1) * 8, s1);
        cap_scores(s1, n, softcap);
      }
      for (std::int64_t key = 0; key < n; ++key) {
        const __m256 vv = load8_f16(v + (k0 + key) * stride);
        step_hd8(state[h], s0[key], vv, y0);
        if (pair) step_hd8(state[h + 1], s1[key], vv, y1);
      }
    }
    store8_f16(acc + h * 8, y0);
    if (pair) store8_f16(acc + (h + 1) * 8, y1);
  }
}

KVSCOPE_TARGET_AVX2 void keys_avx2(const std::uint16_t* k, const std::uint16_t* v,
                                   std::int64_t stride, std::int64_t n_keys, std::int64_t hd,
                                   float scale, float softcap, const std::uint16_t* q16,
                                   std::uint16_t* acc, GgmlFlashHead* state, std::int64_t n_heads) {
  if (hd == 8) {
    return keys_hd8_avx2(k, v, stride, n_keys, scale, softcap, q16, acc, state, n_heads);
  }
  float scores[kChunk];
  for (std::int64_t k0 = 0; k0 < n_keys; k0 += kChunk) {
    const std::int64_t n = std::min(kChunk, n_keys - k0);
    // heads are independent: each walks the chunk (in L1 after the first) in key order
    for (std::int64_t h = 0; h < n_heads; ++h) {
      scores_avx2(k + k0 * stride, stride, n, hd, scale, q16 + h * hd, scores);
      cap_scores(scores, n, softcap);
      GgmlFlashHead& st = state[h];
      std::uint16_t* a = acc + h * hd;
      for (std::int64_t key = 0; key < n; ++key) {
        const float s = scores[key];
        float ms = 1.0f, vs = 1.0f;
        const bool new_max = s > st.max;
        if (new_max) {
          ms = std::exp(st.max - s);
          st.max = s;
        } else {
          vs = std::exp(s - st.max);
        }
        update_acc_avx2(a, v + (k0 + key) * stride, hd, new_max, ms, vs);
        st.sum = std::fma(st.sum, ms, vs);
      }
    }
  }
}

#endif  // KVSCOPE_X86_SIMD

}  // namespace

void ggml_flash_begin(const float* q, std::int64_t head_dim, std::uint16_t* q16, std::uint16_t* acc,
                      GgmlFlashHead& state) {
  for (std::int64_t i = 0; i < head_dim; ++i) {
    q16[i] = float_to_fp16(q[i]);  // round to nearest even, as F16C's _mm512_cvtps_ph
    acc[i] = 0;
  }
  state.max = -std::numeric_limits<float>::infinity();
  state.sum = 0.0f;
}

void ggml_flash_keys(const std::uint16_t* k, const std::uint16_t* v, std::int64_t stride,
                     std::int64_t n_keys, std::int64_t head_dim, float scale,
                     const std::uint16_t* q16, std::uint16_t* acc, GgmlFlashHead* state,
                     std::int64_t n_heads, float softcap) {
  // as ggml: with a soft-cap the scale is divided by it first, s = softcap * tanhf(s) after
  const float s_scale = softcap != 0.0f ? scale / softcap : scale;
#if KVSCOPE_X86_SIMD
  if (use_avx2_fma_f16c()) {
    return keys_avx2(k, v, stride, n_keys, head_dim, s_scale, softcap, q16, acc, state, n_heads);
  }
#endif
  keys_portable(k, v, stride, n_keys, head_dim, s_scale, softcap, q16, acc, state, n_heads);
}

void ggml_flash_end(const std::uint16_t* acc, const GgmlFlashHead& state, std::int64_t head_dim,
                    float* out) {
  const float inv = state.sum == 0.0f ? 0.0f : 1.0f / state.sum;
  for (std::int64_t i = 0; i < head_dim; ++i) out[i] = fp16_to_float(acc[i]) * inv;
}

float ggml_dot_f16(const std::uint16_t* k, const std::uint16_t* q, std::int64_t n) {
#if KVSCOPE_X86_SIMD
  if (use_avx2_fma_f16c()) return dot_f16_avx2(k, q, n);
#endif
  return dot_f16_portable(k, q, n);
}

}  // namespace kvscope
