#include "run/cpu_attention.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "kv/kv_format.h"
#include "run/thread_pool.h"
#include "util/error.h"

namespace kvscope {

namespace {

// Running state of one query head's online softmax: acc = sum_j e^(s_j - max) v_j,
// sum = sum_j e^(s_j - max).
struct OnlineSoftmax {
  float max = -std::numeric_limits<float>::infinity();
  float sum = 0.0f;
};

// Attention of the `group` query heads that share KV head `kv_head`, for the query at
// `pos`. q: [group][head_dim] (pre-scaled by 1/sqrt(head_dim)); out: [group][head_dim].
// scores: [group][block_size] scratch.
void attend_one(const KvCacheManager& kv, SeqId seq, std::int64_t layer, std::int64_t kv_head,
                std::int64_t group_size, std::int64_t pos, const float* q, float* out,
                std::vector<float>& scores) {
  const std::int64_t g = kv.group_of_layer(layer);
  const std::int64_t li = kv.layer_in_group(layer);
  const KvBlockLayout& L = kv.layout(g);
  const BlockTable& table = kv.block_table(seq, g);
  const std::int64_t hd = L.head_dim;
  const std::int64_t bs = L.block_size;
  scores.resize(static_cast<std::size_t>(group_size * bs));

  std::vector<OnlineSoftmax> state(static_cast<std::size_t>(group_size));
  std::fill(out, out + group_size * hd, 0.0f);

  const std::int64_t first = kv.first_visible_position(g, pos);
  for (std::int64_t b = first / bs; b <= pos / bs; ++b) {
    const std::uint8_t* base = kv.block_data(g, table.block(b));
    const std::int64_t s0 = std::max(first, b * bs) - b * bs;
    const std::int64_t s1 = std::min(pos, b * bs + bs - 1) - b * bs;
    // scores[h][s] = q_h . k_s; each key is dequantized once for the whole group
    for (std::int64_t s = s0; s <= s1; ++s) {
      const auto* kd = L.data(base, KvSide::K, li, kv_head, s);
      const auto* ks = L.scales(base, KvSide::K, li, kv_head, s);
      for (std::int64_t h = 0; h < group_size; ++h) {
        scores[h * bs + s] = kv_dot(L.k_dtype, q + h * hd, kd, ks, hd);
      }
    }
    for (std::int64_t h = 0; h < group_size; ++h) {
      float* sc = &scores[h * bs];
      float* o = out + h * hd;
      OnlineSoftmax& st = state[h];
      float block_max = st.max;
      for (std::int64_t s = s0; s <= s1; ++s) block_max = std::max(block_max, sc[s]);
      // rescale what was accumulated under the old max
      const float rescale = std::exp(st.max - block_max);
      if (rescale != 1.0f) {
        for (std::int64_t i = 0; i < hd; ++i) o[i] *= rescale;
        st.sum *= rescale;
      }
      st.max = block_max;
      for (std::int64_t s = s0; s <= s1; ++s) {
        const float w = std::exp(sc[s] - block_max);
        st.sum += w;
        kv_axpy(L.v_dtype, w, L.data(base, KvSide::V, li, kv_head, s),
                L.scales(base, KvSide::V, li, kv_head, s), hd, o);
      }
    }
  }
  for (std::int64_t h = 0; h < group_size; ++h) {
    const float inv = state[h].sum > 0.0f ? 1.0f / state[h].sum : 0.0f;
    for (std::int64_t i = 0; i < hd; ++i) out[h * hd + i] *= inv;
  }
}

}  // namespace

void paged_attention(ThreadPool& pool, const KvCacheManager& kv, SeqId seq, std::int64_t layer,
                     const AttentionShape& shape, std::int64_t start_pos, std::int64_t n_tokens,
                     std::span<const float> q, std::span<float> out) {
  const std::int64_t hd = shape.head_dim;
  const std::int64_t q_dim = shape.n_heads * hd;
  if (static_cast<std::int64_t>(q.size()) != n_tokens * q_dim ||
      static_cast<std::int64_t>(out.size()) != n_tokens * q_dim) {
    throw_error<UsageError>("paged_attention: q has {} and out {} values, expected {} x {}",
                            q.size(), out.size(), n_tokens, q_dim);
  }
  const std::int64_t group = shape.n_heads / shape.n_kv_heads;
  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
  // one work item per (token, kv head); heads of a group are adjacent in q: [n_heads][hd]
  pool.parallel_for(n_tokens * shape.n_kv_heads, [&](std::int64_t begin, std::int64_t end) {
    std::vector<float> scores;
    std::vector<float> qs(static_cast<std::size_t>(group * hd));
    for (std::int64_t item = begin; item < end; ++item) {
      const std::int64_t t = item / shape.n_kv_heads;
      const std::int64_t kvh = item % shape.n_kv_heads;
      const float* qt = q.data() + t * q_dim + kvh * group * hd;
      for (std::int64_t i = 0; i < group * hd; ++i) qs[i] = qt[i] * scale;
      attend_one(kv, seq, layer, kvh, group, start_pos + t, qs.data(),
                 out.data() + t * q_dim + kvh * group * hd, scores);
    }
  });
}

}  // namespace kvscope
