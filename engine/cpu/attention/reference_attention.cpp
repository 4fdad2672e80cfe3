#include "cpu/attention/reference_attention.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "kv/format/kv_format.h"
#include "util/error.h"

namespace kvscope {

namespace {

// Where a position's key and value are read: a block's bytes and the layout that reads them
// (the group's, or fp16 for an exact-tail copy).
struct SlotSource {
  const KvBlockLayout* layout;
  const std::uint8_t* block;
  std::int64_t slot;
};

SlotSource slot_source(const KvCacheManager& kv, std::int64_t group, const BlockTable& table,
                       std::int64_t pos, std::int64_t query_pos) {
  const KvBlockLayout& L = kv.layout(group);
  const std::int64_t logical = pos / L.block_size;
  const BlockId block = table.block(logical);
  const std::int64_t slot = pos % L.block_size;
  if (const ExactTail* tail = kv.exact_tail(group)) {
    const std::uint8_t* copy = tail->shadow(block);
    if (copy && tail->reads_exact(logical, query_pos)) return {&tail->layout(), copy, slot};
  }
  return {&L, kv.bytes().block_data(group, block), slot};
}

// The decoded key or value [head_dim] of (layer li, KV head) at a slot.
std::vector<float> decode(const SlotSource& s, KvSide side, std::int64_t li, std::int64_t head) {
  const KvBlockLayout& L = *s.layout;
  std::vector<float> x(static_cast<std::size_t>(L.head_dim));
  const std::uint8_t* data = L.data(s.block, side, li, head, s.slot);
  const std::uint16_t* scales = L.scales(s.block, side, li, head, s.slot);
  if (side == KvSide::K && L.k_dtype == KvDtype::Int4) {
    kv_k4_dequantize(data, scales, L.k_offsets(s.block, li, head), L.head_dim, x.data());
  } else {
    kv_dequantize(L.dtype(side), data, scales, L.head_dim, x.data());
  }
  return x;
}

}  // namespace

void reference_attention(const KvCacheManager& kv, SeqId seq, std::int64_t layer,
                         const AttentionShape& shape, std::int64_t query_pos,
                         std::span<const float> q, std::span<float> out) {
  const std::int64_t d = shape.head_dim;
  if (static_cast<std::int64_t>(q.size()) != shape.n_heads * d || out.size() != q.size()) {
    throw_error<UsageError>("reference attention: q and out must hold {} heads of {}",
                            shape.n_heads, d);
  }
  const std::int64_t group = kv.group_of_layer(layer);
  const std::int64_t li = kv.layer_in_group(layer);
  const BlockTable& table = kv.block_table(seq, group);
  const std::int64_t first = kv.first_visible_position(group, query_pos);
  const std::int64_t heads_per_kv = shape.n_heads / shape.n_kv_heads;
  const double scale = 1.0 / std::sqrt(static_cast<double>(d));
  const double cap = shape.softcap;
  for (std::int64_t h = 0; h < shape.n_heads; ++h) {
    const std::int64_t kv_head = h / heads_per_kv;
    const float* qh = q.data() + h * d;
    // scores[pos - first] = cap(q . k_pos / sqrt(d)); then softmax weights over them
    std::vector<double> scores;
    for (std::int64_t pos = first; pos <= query_pos; ++pos) {
      const std::vector<float> k =
          decode(slot_source(kv, group, table, pos, query_pos), KvSide::K, li, kv_head);
      double dot = 0.0;
      for (std::int64_t i = 0; i < d; ++i) dot += static_cast<double>(qh[i]) * k[i];
      const double score = dot * scale;
      scores.push_back(cap > 0.0 ? cap * std::tanh(score / cap) : score);
    }
    const double top = *std::max_element(scores.begin(), scores.end());
    double sum = 0.0;
    for (double& s : scores) sum += (s = std::exp(s - top));
    std::vector<double> acc(static_cast<std::size_t>(d), 0.0);
    for (std::int64_t pos = first; pos <= query_pos; ++pos) {
      const std::vector<float> v =
          decode(slot_source(kv, group, table, pos, query_pos), KvSide::V, li, kv_head);
      const double w = scores[static_cast<std::size_t>(pos - first)] / sum;
      for (std::int64_t i = 0; i < d; ++i) acc[static_cast<std::size_t>(i)] += w * v[i];
    }
    for (std::int64_t i = 0; i < d; ++i) out[h * d + i] = static_cast<float>(acc[i]);
  }
}

}  // namespace kvscope
