// Float softmax attention of one GQA group over runs of keys: the CPU attention's default
// arithmetic (paged_attention.h). Keys and values are decoded to float rows once per block for
// all the query heads of the group; scores, exponentials and the weighted sum of values run
// 8 lanes at a time. There is an AVX2 + FMA + F16C version and a portable one that performs
// the same IEEE operations in the same order, so both give the same bits (tests compare them),
// and one for AVX alone, whose CPUs have no FMA: it multiplies and adds in two roundings.
//
// Rows are `row` = head_dim rounded up to 8 floats; the padding columns of q, K and V rows
// are zero, so every dot product and every update runs over whole 8-lane vectors.
//
// Online softmax over keys fed run by run (a run is one block's visible slots): for query head
// h with scores s_j = q_h . k_j (q pre-scaled by 1/sqrt(head_dim)) the state keeps
//   max[h] = max_j s_j,   sum[h] = sum_j e^(s_j - max[h]),   acc[h] = sum_j e^(s_j - max[h]) v_j
// and two states over disjoint key ranges merge into the state of their union; the result is
// acc[h] / sum[h].
#pragma once

#include <cstdint>
#include <vector>

#include "kv/format/kv_format.h"

namespace kvscope {

constexpr std::int64_t kFloatAttentionLanes = 8;

// head_dim rounded up to a whole number of lanes.
inline std::int64_t float_attention_row(std::int64_t head_dim) {
  return (head_dim + kFloatAttentionLanes - 1) / kFloatAttentionLanes * kFloatAttentionLanes;
}

// The softmax state of `n_heads` query heads. acc: [n_heads][row].
struct FloatAttentionState {
  std::int64_t n_heads = 0;
  std::int64_t row = 0;
  std::vector<float> max, sum, acc;

  // No key seen yet: max = -inf, sum = 0, acc = 0 (allocates only when it grows).
  void reset(std::int64_t heads, std::int64_t row_floats);
  bool empty(std::int64_t h) const { return sum[h] == 0.0f; }
};

// What offset-int4 keys (kv_format.h) add to a score beyond q . k, where k holds only
// s * code (kv_k4_scaled_codes): for query head h and key j of a block with offsets o,
//   score = q_h . k_j + sum_g m_jg * (sum of q_h over group g) + q_h . o
// computed as: lanes start at key[j] * query[h] (the first 8 multiplied, further 8s fused),
// then take q_h . k_j 8 at a time (fused) and are summed as the score of plain keys;
// then + q_h . o (the same 8-lane dot). Adding o + m to every value of every key was most of
// the cost of reading int4 keys.
struct KeyTerms {
  const float* key = nullptr;      // [n_keys][width]: each key's scales {s0, m0, s1, m1, ...}
  const float* query = nullptr;    // [n_heads][width]: {0, sum_g0 q, 0, sum_g1 q, ...}
  const float* offsets = nullptr;  // [row]: the block's offsets, zero padded
  std::int64_t width = 0;          // float_attention_key_terms_width(head_dim)
};

// The key terms' width: the scales of an offset-int4 key rounded up to whole lanes.
std::int64_t float_attention_key_terms_width(std::int64_t head_dim);

// query[h] of KeyTerms for one head: the sums of q (pre-scaled, [head_dim]) over each of
// kv_k4_group_size's groups, in index order, at the odd lanes; out: [width].
void float_attention_key_query_terms(const float* q, std::int64_t head_dim, float* out);

// Feeds n_keys keys to every head of `state`:
//   q: [n_heads][row] pre-scaled, zero padded;  k, v: [n_keys][row] zero padded;
//   scores: scratch of at least n_heads * round_up(n_keys, 8) floats;
//   terms: offset-int4 keys' terms (nullptr for fp16 and int8 keys);
//   softcap: each score s becomes softcap * tanh(s / softcap) before the softmax (0: off).
void float_attention_keys(const float* q, const float* k, const float* v, std::int64_t n_keys,
                          FloatAttentionState& state, float* scores,
                          const KeyTerms* terms = nullptr, float softcap = 0.0f);

// into = the state of into's keys and from's keys together (same heads and row).
void float_attention_merge(FloatAttentionState& into, const FloatAttentionState& from);

// out[h][0, head_dim) = acc[h] / sum[h] (0 for a head that saw no key). out: [n_heads][head_dim].
void float_attention_end(const FloatAttentionState& state, std::int64_t head_dim, float* out);

// fp16 rows to float rows: src [n][src_stride] fp16 bits (the first head_dim used),
// dst [n][row] with zero padding.
void float_attention_rows_from_f16(const std::uint16_t* src, std::int64_t src_stride,
                                   std::int64_t n, std::int64_t head_dim, std::int64_t row,
                                   float* dst);

// Int8 or Int4 vectors of the cache to float rows, the values kv_dequantize gives (for Int4
// on the K side kv_k4_scaled_codes', and each key's scales as floats in key_terms
// [n][float_attention_key_terms_width], zero padded; nullptr on other sides and dtypes) bit
// for bit, 8 at a time with AVX2 or AVX. Vector j's data is at data + j * data_stride bytes
// and its scales at scales + j * scales_stride; out: [n][row], zero padded.
void float_attention_rows_from_quantized(KvSide side, KvDtype dtype, const std::uint8_t* data,
                                         std::int64_t data_stride, const std::uint16_t* scales,
                                         std::int64_t scales_stride, std::int64_t n,
                                         std::int64_t head_dim, std::int64_t row, float* out,
                                         float* key_terms = nullptr);

// y[i] = e^x[i] for x[i] <= 0 (larger values are clamped to 88), to about 2 ulp; below
// about -87.3 it returns e^-87.3 (1.2e-38) instead of a smaller number or 0. The exponential
// the kernels use, exposed for tests.
void float_attention_exp(const float* x, float* y, std::int64_t n);

}  // namespace kvscope
