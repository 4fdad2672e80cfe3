// The x86 functions of float attention (float_attention_simd.h's SimdTable), written once on
// 256-bit float vectors and compiled twice: float_attention_avx2.cpp (AVX2 + FMA + F16C: the
// portable functions' bits) and float_attention_avx.cpp (AVX alone: a multiply and an add
// where those fuse, x86_vec.h's v_fmadd). Each file sets the flags and includes this once.
// Here: scores, softmax bookkeeping and values; the stored rows' decoding into floats is in
// float_attention_x86_rows.h.
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "cpu/attention/float_attention_simd.h"
#include "cpu/attention/float_attention_x86_rows.h"
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

// reduce8 of lanes that start at `s` and take a . b 8 at a time.
template <std::int64_t kRow = 0>
KVSCOPE_X86_INLINE float dot(const float* a, const float* b, std::int64_t row,
                             __m256 s = _mm256_setzero_ps()) {
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

// The lanes an offset-int4 key's score starts from (KeyTerms): key * query, 8 at a time.
KVSCOPE_X86_INLINE __m256 terms_lanes(const float* key, const float* query, std::int64_t width) {
  __m256 s = _mm256_mul_ps(_mm256_loadu_ps(key), _mm256_loadu_ps(query));
  for (std::int64_t i = kLanes; i < width; i += kLanes) {
    s = v_fmadd(_mm256_loadu_ps(key + i), _mm256_loadu_ps(query + i), s);
  }
  return s;
}

// reduce8 of eight vectors at once, out[k] = reduce8(x[k]), through reduce8's own tree (lane
// i + lane i + 4, then the pairs 0 + 2 and 1 + 3, then those two), so the same bits; the
// shuffles are shared by the eight, where reduce8 spends them on one (about 5 instructions a
// key and head, a fifth of a 64-value score).
KVSCOPE_X86_INLINE void reduce8x8(const __m256 (&x)[8], float* out) {
  __m256 s[4];  // key pairs (2p, 2p + 1): [x_2p lo + hi | x_2p+1 lo + hi]
  for (int p = 0; p < 4; ++p) {
    s[p] = _mm256_add_ps(_mm256_permute2f128_ps(x[2 * p], x[2 * p + 1], 0x20),
                         _mm256_permute2f128_ps(x[2 * p], x[2 * p + 1], 0x31));
  }
  __m256 t[2];  // [t_a0 t_a1 t_c0 t_c1 | t_b0 t_b1 t_d0 t_d1] for keys a b = 4p', c d = 4p' + 2
  for (int p = 0; p < 2; ++p) {
    t[p] = _mm256_add_ps(_mm256_shuffle_ps(s[2 * p], s[2 * p + 1], _MM_SHUFFLE(1, 0, 1, 0)),
                         _mm256_shuffle_ps(s[2 * p], s[2 * p + 1], _MM_SHUFFLE(3, 2, 3, 2)));
  }
  // keys [0 2 4 6 | 1 3 5 7]
  const __m256 r = _mm256_add_ps(_mm256_shuffle_ps(t[0], t[1], _MM_SHUFFLE(2, 0, 2, 0)),
                                 _mm256_shuffle_ps(t[0], t[1], _MM_SHUFFLE(3, 1, 3, 1)));
  const __m128 even = _mm256_castps256_ps128(r), odd = _mm256_extractf128_ps(r, 1);
  _mm_storeu_ps(out, _mm_unpacklo_ps(even, odd));
  _mm_storeu_ps(out + 4, _mm_unpackhi_ps(even, odd));
}

// The lanes key j's score starts from: zero, or its offset-int4 terms (KeyTerms) times the
// query's (qv: the query's terms when they fit one vector).
KVSCOPE_X86_INLINE __m256 start_lanes(const KeyTerms* terms, const float* query, __m256 qv,
                                      std::int64_t j) {
  if (terms == nullptr) return _mm256_setzero_ps();
  if (terms->width == kLanes) return _mm256_mul_ps(_mm256_loadu_ps(terms->key + j * kLanes), qv);
  return terms_lanes(terms->key + j * terms->width, query, terms->width);
}

// w[j] = the score of key j for query qh (one head; KeyTerms for offset-int4 keys, whose
// block term q . o is added after the reduction). Eight keys at a time share the reduction
// (reduce8x8); each key's lanes take q . k in the same order as dot's.
template <std::int64_t kRow>
KVSCOPE_X86_INLINE void scores_of(const float* qh, const float* k, std::int64_t n_keys,
                                  std::int64_t row, const KeyTerms* terms, std::int64_t h,
                                  float* w) {
  const float* query = terms ? terms->query + h * terms->width : nullptr;
  const __m256 qv = terms && terms->width == kLanes ? _mm256_loadu_ps(query) : _mm256_setzero_ps();
  const float bias = terms ? dot<kRow>(qh, terms->offsets, row) : 0.0f;
  const std::int64_t n = row_length<kRow>(row);
  std::int64_t j = 0;
  for (; j + 8 <= n_keys; j += 8) {
    __m256 acc[8];
#pragma GCC unroll 8
    for (int u = 0; u < 8; ++u) acc[u] = start_lanes(terms, query, qv, j + u);
#pragma GCC unroll 16
    for (std::int64_t i = 0; i < n; i += kLanes) {
      const __m256 qi = _mm256_loadu_ps(qh + i);
#pragma GCC unroll 8
      for (int u = 0; u < 8; ++u) {
        acc[u] = v_fmadd(qi, _mm256_loadu_ps(k + (j + u) * row + i), acc[u]);
      }
    }
    reduce8x8(acc, w + j);
    if (terms) {
      for (int u = 0; u < 8; ++u) w[j + u] += bias;
    }
  }
  for (; j < n_keys; ++j) {
    const float score = dot<kRow>(qh, k + j * row, row, start_lanes(terms, query, qv, j));
    w[j] = terms ? score + bias : score;
  }
}

// accumulate for kHeads heads at once, 32 columns at a time: a[h] += sum_j w[h][j] v[j]. Each
// register still takes its column's keys in order (one head at a time gives the same bits),
// but kHeads x 4 chains of fused multiply-adds run side by side: one head's 8 chains wait on
// the FMA latency (4 cycles a key), and that, not the arithmetic, set the pace.
template <int kHeads, std::int64_t kRow>
KVSCOPE_X86_INLINE void accumulate_heads(float* const* a, const float* const* w, const float* v,
                                         std::int64_t n_keys) {
  constexpr int kRegs = 4;
  static_assert(kRow % (kRegs * kLanes) == 0);
  for (std::int64_t c0 = 0; c0 < kRow; c0 += kRegs * kLanes) {
    __m256 acc[kHeads][kRegs];
    for (int h = 0; h < kHeads; ++h) {
      for (int r = 0; r < kRegs; ++r) acc[h][r] = _mm256_loadu_ps(a[h] + c0 + r * kLanes);
    }
    for (std::int64_t j = 0; j < n_keys; ++j) {
      const float* vj = v + j * kRow + c0;
      for (int h = 0; h < kHeads; ++h) {
        const __m256 wj = _mm256_set1_ps(w[h][j]);
        for (int r = 0; r < kRegs; ++r) {
          acc[h][r] = v_fmadd(wj, _mm256_loadu_ps(vj + r * kLanes), acc[h][r]);
        }
      }
    }
    for (int h = 0; h < kHeads; ++h) {
      for (int r = 0; r < kRegs; ++r) _mm256_storeu_ps(a[h] + c0 + r * kLanes, acc[h][r]);
    }
  }
}

// Every head's accumulate: three heads at a time where the row length is known, else one.
template <std::int64_t kRow>
KVSCOPE_X86_INLINE void accumulate_all(FloatAttentionState& st, const float* scores,
                                       std::int64_t stride, const float* v, std::int64_t n_keys) {
  const std::int64_t row = row_length<kRow>(st.row);
  std::int64_t h = 0;
  if constexpr (kRow > 0) {
    for (; h < st.n_heads; h += 3) {
      float* a[3];
      const float* w[3];
      for (std::int64_t i = 0; i < 3; ++i) {
        const std::int64_t hi = std::min(h + i, st.n_heads - 1);
        a[i] = &st.acc[hi * row];
        w[i] = scores + hi * stride;
      }
      switch (st.n_heads - h) {
        case 1:
          accumulate_heads<1, kRow>(a, w, v, n_keys);
          break;
        case 2:
          accumulate_heads<2, kRow>(a, w, v, n_keys);
          break;
        default:
          accumulate_heads<3, kRow>(a, w, v, n_keys);
      }
    }
  }
  for (; h < st.n_heads; ++h)
    accumulate<kRow>(&st.acc[h * row], scores + h * stride, v, n_keys, row);
}

// The heads go through each step together (scores, then softmax bookkeeping, then values):
// one head's steps depend on each other, different heads' do not, and side by side the
// processor overlaps them. Per head the operations and their order are unchanged.
template <std::int64_t kRow>
void keys_of_row(const float* q, const float* k, const float* v, std::int64_t n_keys,
                 FloatAttentionState& st, float* scores, const KeyTerms* terms, float softcap) {
  const std::int64_t row = row_length<kRow>(st.row);
  const std::int64_t stride = (n_keys + kLanes - 1) / kLanes * kLanes;
  for (std::int64_t h = 0; h < st.n_heads; ++h) {
    scores_of<kRow>(q + h * row, k, n_keys, row, terms, h, scores + h * stride);
    soft_cap(scores + h * stride, n_keys, softcap);
  }
  for (std::int64_t h = 0; h < st.n_heads; ++h) {
    float* w = scores + h * stride;
    raise_max(st, h, max_of(w, n_keys));
    exp_shifted(w, n_keys, st.max[h]);
  }
  for (std::int64_t h = 0; h < st.n_heads; ++h) {
    float sum = st.sum[h];
    for (std::int64_t j = 0; j < n_keys; ++j) sum += scores[h * stride + j];
    st.sum[h] = sum;
  }
  accumulate_all<kRow>(st, scores, stride, v, n_keys);
}

void keys(const float* q, const float* k, const float* v, std::int64_t n_keys,
          FloatAttentionState& st, float* scores, const KeyTerms* terms, float softcap) {
  with_length(st.row,
              [&](auto row) { keys_of_row<row()>(q, k, v, n_keys, st, scores, terms, softcap); });
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

constexpr SimdTable kTable{&keys, &merge, &rows_from_f16, &rows_from_quantized, &exp_shifted};

}  // namespace
}  // namespace kvscope::float_attention_detail
