#include "cpu/cpu_attention.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "cpu/ggml_flash_attn.h"
#include "cpu/thread_pool.h"
#include "kv/format/kv_format.h"
#include "util/error.h"
#include "util/half.h"

namespace kvscope {

namespace {

// Per-thread scratch for one (token, KV head) work item; sized once per parallel_for chunk.
struct Scratch {
  std::vector<float> q_scaled;          // [group][head_dim]   float path
  std::vector<float> scores;            // [group][block_size] float path
  std::vector<float> run_max, run_sum;  // [group]             float path
  std::vector<float> keys, values;      // [block_size + 1][head_dim] float path (decode_block)
  std::vector<std::uint16_t> q16, acc;  // [group][head_dim]   fp16 path
  std::vector<GgmlFlashHead> heads;     // [group]             fp16 path
};

// What one attention call reads: the layer's group, its layout and the sequence's blocks.
struct LayerView {
  const KvCacheManager& kv;
  const KvBlockLayout& L;
  const BlockTable& table;
  std::int64_t group;
  std::int64_t layer;  // index inside the group's blocks
};

// Calls fn(base, s0, s1) for every block holding visible keys of the query at `pos`, in
// position order; slots [s0, s1] of the block at `base` are the visible ones.
template <typename Fn>
void for_each_visible_block(const LayerView& lv, std::int64_t pos, Fn&& fn) {
  const std::int64_t bs = lv.L.block_size;
  const std::int64_t first = lv.kv.first_visible_position(lv.group, pos);
  for (std::int64_t b = first / bs; b <= pos / bs; ++b) {
    const std::uint8_t* base = lv.kv.block_data(lv.group, lv.table.block(b));
    fn(base, std::max(first, b * bs) - b * bs, std::min(pos, b * bs + bs - 1) - b * bs);
  }
}

// fp16 K and V: llama.cpp's flash attention for the `group` query heads of KV head
// `kv_head`. q, out: [group][head_dim] (q rotated, not scaled).
void attend_f16(const LayerView& lv, std::int64_t kv_head, std::int64_t group, std::int64_t pos,
                float scale, const float* q, float* out, Scratch& s) {
  const std::int64_t hd = lv.L.head_dim;
  s.q16.resize(static_cast<std::size_t>(group * hd));
  s.acc.resize(static_cast<std::size_t>(group * hd));
  s.heads.resize(static_cast<std::size_t>(group));
  for (std::int64_t h = 0; h < group; ++h) {
    ggml_flash_begin(q + h * hd, hd, &s.q16[h * hd], &s.acc[h * hd], s.heads[h]);
  }
  // K and V of one head are [block_size][head_dim] fp16 inside a block: the kernel walks a
  // block's visible slots as one strided run, K and V read once for the whole group.
  const std::int64_t stride = lv.L.data_stride(KvSide::K) / 2;
  for_each_visible_block(lv, pos, [&](const std::uint8_t* base, std::int64_t s0, std::int64_t s1) {
    const auto* k =
        reinterpret_cast<const std::uint16_t*>(lv.L.data(base, KvSide::K, lv.layer, kv_head, s0));
    const auto* v =
        reinterpret_cast<const std::uint16_t*>(lv.L.data(base, KvSide::V, lv.layer, kv_head, s0));
    ggml_flash_keys(k, v, stride, s1 - s0 + 1, hd, scale, s.q16.data(), s.acc.data(),
                    s.heads.data(), group);
  });
  for (std::int64_t h = 0; h < group; ++h) {
    ggml_flash_end(&s.acc[h * hd], s.heads[h], hd, out + h * hd);
  }
}

// Decodes the visible K or V vectors [s0, s1] of one KV head in a block into
// buf [block_size + 1][head_dim] (rows s0..s1; the last row is scratch): every stored byte is
// decoded once per block for the whole group of query heads, and the arithmetic after it runs on
// plain floats.
void decode_block(const LayerView& lv, KvSide side, std::int64_t kv_head, const std::uint8_t* base,
                  std::int64_t s0, std::int64_t s1, float* buf) {
  const KvBlockLayout& L = lv.L;
  const std::int64_t hd = L.head_dim;
  const std::int64_t bs = L.block_size;
  const bool k4 = side == KvSide::K && L.k_dtype == KvDtype::Int4;
  float* offsets = buf + bs * hd;  // [head_dim] after the rows: the block's key offsets
  if (k4) {
    const std::uint16_t* stored = L.k_offsets(base, lv.layer, kv_head);
    for (std::int64_t i = 0; i < hd; ++i) offsets[i] = fp16_to_float(stored[i]);
  }
  for (std::int64_t slot = s0; slot <= s1; ++slot) {
    const auto* data = L.data(base, side, lv.layer, kv_head, slot);
    const auto* scales = L.scales(base, side, lv.layer, kv_head, slot);
    if (k4) {
      kv_k4_dequantize(data, scales, offsets, hd, buf + slot * hd);
    } else {
      kv_dequantize(L.dtype(side), data, scales, hd, buf + slot * hd);
    }
  }
}

// a . b over n floats in 8 independent running sums, which the compiler turns into SIMD
// lanes (one running sum is a dependency chain it may not reorder).
float dot8(const float* a, const float* b, std::int64_t n) {
  float acc[8] = {};
  std::int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (int j = 0; j < 8; ++j) acc[j] += a[i + j] * b[i + j];
  }
  float sum = ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
  for (; i < n; ++i) sum += a[i] * b[i];
  return sum;
}

// Quantized K or V: float attention, softmax online block by block. q: [group][head_dim]
// pre-scaled by 1/sqrt(head_dim); out: [group][head_dim].
void attend_float(const LayerView& lv, std::int64_t kv_head, std::int64_t group, std::int64_t pos,
                  const float* q, float* out, Scratch& s) {
  const KvBlockLayout& L = lv.L;
  const std::int64_t hd = L.head_dim;
  const std::int64_t bs = L.block_size;
  s.scores.resize(static_cast<std::size_t>(group * bs));
  s.keys.resize(static_cast<std::size_t>((bs + 1) * hd));
  s.values.resize(static_cast<std::size_t>((bs + 1) * hd));
  // per head: out accumulates sum_j e^(s_j - max) v_j, run_sum sums e^(s_j - max)
  s.run_max.assign(static_cast<std::size_t>(group), -std::numeric_limits<float>::infinity());
  s.run_sum.assign(static_cast<std::size_t>(group), 0.0f);
  std::fill(out, out + group * hd, 0.0f);
  for_each_visible_block(lv, pos, [&](const std::uint8_t* base, std::int64_t s0, std::int64_t s1) {
    decode_block(lv, KvSide::K, kv_head, base, s0, s1, s.keys.data());
    decode_block(lv, KvSide::V, kv_head, base, s0, s1, s.values.data());
    for (std::int64_t h = 0; h < group; ++h) {
      float* sc = &s.scores[h * bs];
      float* o = out + h * hd;
      float block_max = s.run_max[h];
      for (std::int64_t slot = s0; slot <= s1; ++slot) {
        sc[slot] = dot8(q + h * hd, &s.keys[slot * hd], hd);
        block_max = std::max(block_max, sc[slot]);
      }
      const float rescale = std::exp(s.run_max[h] - block_max);  // re-weighs the old terms
      if (rescale != 1.0f) {
        for (std::int64_t i = 0; i < hd; ++i) o[i] *= rescale;
        s.run_sum[h] *= rescale;
      }
      s.run_max[h] = block_max;
      for (std::int64_t slot = s0; slot <= s1; ++slot) {
        const float w = std::exp(sc[slot] - block_max);
        s.run_sum[h] += w;
        const float* v = &s.values[slot * hd];
        for (std::int64_t i = 0; i < hd; ++i) o[i] += w * v[i];
      }
    }
  });
  for (std::int64_t h = 0; h < group; ++h) {
    const float inv = s.run_sum[h] > 0.0f ? 1.0f / s.run_sum[h] : 0.0f;
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
  const std::int64_t g = kv.group_of_layer(layer);
  const LayerView lv{kv, kv.layout(g), kv.block_table(seq, g), g, kv.layer_in_group(layer)};
  const bool f16 = lv.L.k_dtype == KvDtype::F16 && lv.L.v_dtype == KvDtype::F16;
  const std::int64_t group = shape.n_heads / shape.n_kv_heads;
  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));  // llama.cpp's kq_scale
  // One work item per (token, KV head, part of its query heads). Decoding has few (3 KV heads
  // for SmolLM2): the heads of a group are then split into parts so every thread has work.
  // A head's arithmetic does not depend on the others of its group, so results are the same;
  // each part reads the group's K and V once.
  const std::int64_t items = n_tokens * shape.n_kv_heads;
  const std::int64_t want = 2 * static_cast<std::int64_t>(pool.size());
  const std::int64_t parts = items >= want ? 1 : std::min(group, (want + items - 1) / items);
  const std::int64_t part_heads = (group + parts - 1) / parts;
  pool.parallel_for(items * parts, [&](std::int64_t begin, std::int64_t end) {
    Scratch s;
    for (std::int64_t item = begin; item < end; ++item) {
      const std::int64_t t = item / (shape.n_kv_heads * parts);
      const std::int64_t kvh = item / parts % shape.n_kv_heads;
      const std::int64_t h0 = item % parts * part_heads;
      const std::int64_t n_heads = std::min(part_heads, group - h0);
      if (n_heads <= 0) continue;
      // heads of a group are adjacent in q and out: [n_heads][hd]
      const std::int64_t first = t * q_dim + (kvh * group + h0) * hd;
      const float* qt = q.data() + first;
      float* ot = out.data() + first;
      if (f16) {
        attend_f16(lv, kvh, n_heads, start_pos + t, scale, qt, ot, s);
        continue;
      }
      s.q_scaled.resize(static_cast<std::size_t>(n_heads * hd));
      for (std::int64_t i = 0; i < n_heads * hd; ++i) s.q_scaled[i] = qt[i] * scale;
      attend_float(lv, kvh, n_heads, start_pos + t, s.q_scaled.data(), ot, s);
    }
  });
}

}  // namespace kvscope
