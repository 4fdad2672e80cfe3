#include "cpu/attention/float_attention.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#include "cpu/simd_dispatch.h"
#include "util/half.h"

#include "cpu/attention/float_attention_simd.h"

// The portable functions spell out, lane by lane, the operations the AVX2 ones
// (float_attention_x86.h) perform (fused where those use FMA, std::fma; nothing else fused:
// engine/CMakeLists.txt builds this file with -ffp-contract=off), so the two give the same
// bits. The AVX-only ones (no FMA) multiply and add in two roundings instead.

namespace kvscope {

namespace {

using namespace float_attention_detail;  // NOLINT(google-build-using-namespace)

// ((l0 + l4) + (l2 + l6)) + ((l1 + l5) + (l3 + l7)): the SIMD horizontal sum's tree.
float reduce_lanes(const float* l) {
  return ((l[0] + l[4]) + (l[2] + l[6])) + ((l[1] + l[5]) + (l[3] + l[7]));
}

// lanes l (0 unless given) + a . b 8 at a time, then summed
float dot_portable(const float* a, const float* b, std::int64_t row, const float* lanes = nullptr) {
  float l[kLanes] = {};
  if (lanes != nullptr) std::copy(lanes, lanes + kLanes, l);
  for (std::int64_t i = 0; i < row; i += kLanes) {
    for (std::int64_t j = 0; j < kLanes; ++j) l[j] = std::fma(a[i + j], b[i + j], l[j]);
  }
  return reduce_lanes(l);
}

// w[j] = the score of key j for query qh (head h), with KeyTerms when given (float_attention.h)
void scores_portable(const float* qh, const float* k, std::int64_t n_keys, std::int64_t row,
                     const KeyTerms* terms, std::int64_t h, float* w) {
  if (terms == nullptr) {
    for (std::int64_t j = 0; j < n_keys; ++j) w[j] = dot_portable(qh, k + j * row, row);
    return;
  }
  const float bias = dot_portable(qh, terms->offsets, row);
  const std::int64_t width = terms->width;
  const float* query = terms->query + h * width;
  for (std::int64_t j = 0; j < n_keys; ++j) {
    const float* key = terms->key + j * width;
    float start[kLanes];
    for (std::int64_t l = 0; l < kLanes; ++l) start[l] = key[l] * query[l];
    for (std::int64_t i = kLanes; i < width; i += kLanes) {
      for (std::int64_t l = 0; l < kLanes; ++l) {
        start[l] = std::fma(key[i + l], query[i + l], start[l]);
      }
    }
    w[j] = dot_portable(qh, k + j * row, row, start) + bias;
  }
}

void keys_portable(const float* q, const float* k, const float* v, std::int64_t n_keys,
                   FloatAttentionState& st, float* scores, const KeyTerms* terms, float softcap) {
  const std::int64_t row = st.row;
  for (std::int64_t h = 0; h < st.n_heads; ++h) {
    float* w = scores + h * ((n_keys + kLanes - 1) / kLanes * kLanes);
    scores_portable(q + h * row, k, n_keys, row, terms, h, w);
    soft_cap(w, n_keys, softcap);
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

// The SIMD table this thread uses: AVX2, else AVX, else none (the portable functions).
const SimdTable* simd() {
  if (use_avx2_fma_f16c()) return avx2_table();
  if (use_avx()) return avx_table();
  return nullptr;
}

}  // namespace

void FloatAttentionState::reset(std::int64_t heads, std::int64_t row_floats) {
  n_heads = heads;
  row = row_floats;
  max.assign(static_cast<std::size_t>(heads), -std::numeric_limits<float>::infinity());
  sum.assign(static_cast<std::size_t>(heads), 0.0f);
  acc.assign(static_cast<std::size_t>(heads * row_floats), 0.0f);
}

std::int64_t float_attention_key_terms_width(std::int64_t head_dim) {
  const std::int64_t n = kv_scales_per_vector(KvSide::K, KvDtype::Int4, head_dim);
  return (n + kLanes - 1) / kLanes * kLanes;
}

void float_attention_key_query_terms(const float* q, std::int64_t head_dim, float* out) {
  std::fill(out, out + float_attention_key_terms_width(head_dim), 0.0f);
  const std::int64_t group = kv_k4_group_size(head_dim);
  for (std::int64_t begin = 0, g = 0; begin < head_dim; begin += group, ++g) {
    float sum = 0.0f;
    for (std::int64_t i = begin; i < std::min(begin + group, head_dim); ++i) sum += q[i];
    out[2 * g + 1] = sum;
  }
}

void float_attention_keys(const float* q, const float* k, const float* v, std::int64_t n_keys,
                          FloatAttentionState& state, float* scores, const KeyTerms* terms,
                          float softcap) {
  if (n_keys <= 0) return;
  if (const SimdTable* t = simd()) return t->keys(q, k, v, n_keys, state, scores, terms, softcap);
  keys_portable(q, k, v, n_keys, state, scores, terms, softcap);
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
    if (const SimdTable* t = simd()) {
      t->merge(into, from, h, ri, rf);
      continue;
    }
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
  if (const SimdTable* t = simd()) return t->rows_from_f16(src, src_stride, n, head_dim, row, dst);
  for (std::int64_t j = 0; j < n; ++j, src += src_stride, dst += row) {
    for (std::int64_t i = 0; i < head_dim; ++i) dst[i] = fp16_to_float(src[i]);
    for (std::int64_t i = head_dim; i < row; ++i) dst[i] = 0.0f;
  }
}

void float_attention_rows_from_quantized(KvSide side, KvDtype dtype, const std::uint8_t* data,
                                         std::int64_t data_stride, const std::uint16_t* scales,
                                         std::int64_t scales_stride, std::int64_t n,
                                         std::int64_t head_dim, std::int64_t row, float* out,
                                         float* key_terms) {
  // groups of whole vectors of 8 (SmolLM2 and larger heads) run 8 lanes at a time
  if (kv_group_size(side, dtype, head_dim) % kLanes == 0) {
    if (const SimdTable* t = simd()) {
      return t->rows_from_quantized(side, dtype, data, data_stride, scales, scales_stride, n,
                                    head_dim, row, out, key_terms);
    }
  }
  const bool k4 = side == KvSide::K && dtype == KvDtype::Int4;
  const std::int64_t n_scales = kv_scales_per_vector(side, dtype, head_dim);
  const std::int64_t width = float_attention_key_terms_width(head_dim);
  for (std::int64_t j = 0; j < n; ++j, data += data_stride, scales += scales_stride, out += row) {
    std::fill(out + head_dim, out + row, 0.0f);
    if (!k4) {
      kv_dequantize(dtype, data, scales, head_dim, out);
      continue;
    }
    kv_k4_scaled_codes(data, scales, head_dim, out);
    if (key_terms == nullptr) continue;
    float* terms = key_terms + j * width;
    for (std::int64_t k = 0; k < n_scales; ++k) terms[k] = fp16_to_float(scales[k]);
    std::fill(terms + n_scales, terms + width, 0.0f);
  }
}

void float_attention_exp(const float* x, float* y, std::int64_t n) {
  if (const SimdTable* t = simd()) {
    std::copy(x, x + n, y);
    t->exp_shifted(y, n, 0.0f);
    return;
  }
  for (std::int64_t i = 0; i < n; ++i) y[i] = exp_lane(x[i]);
}

}  // namespace kvscope
