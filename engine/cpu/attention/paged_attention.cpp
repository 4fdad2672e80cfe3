#include "cpu/attention/paged_attention.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <vector>

#include "cpu/attention/float_attention.h"
#include "cpu/attention/ggml_flash_attn.h"
#include "cpu/thread_pool.h"
#include "kv/format/kv_format.h"
#include "util/error.h"
#include "util/half.h"

namespace kvscope {

namespace {

// Scratch of the fp16 path for one (token, KV head) work item; sized once per parallel_for chunk.
struct Scratch {
  std::vector<std::uint16_t> q16, acc;  // [group][head_dim] fp16 bits
  std::vector<GgmlFlashHead> heads;     // [group]
};

// What one attention call reads: the layer's group, its layout and the sequence's blocks,
// and the group's exact tail (fp16 copies of the newest blocks; nullptr when it has none).
struct LayerView {
  const KvCacheManager& kv;
  const KvBlockLayout& L;
  const BlockTable& table;
  std::int64_t group;
  std::int64_t layer;  // index inside the group's blocks
  const ExactTail* tail = nullptr;
};

// Calls fn(base, s0, s1) for every block holding visible keys of the query at `pos`, in
// position order; slots [s0, s1] of the block at `base` are the visible ones.
template <typename Fn>
void for_each_visible_block(const LayerView& lv, std::int64_t pos, Fn&& fn) {
  const std::int64_t bs = lv.L.block_size;
  const std::int64_t first = lv.kv.first_visible_position(lv.group, pos);
  for (std::int64_t b = first / bs; b <= pos / bs; ++b) {
    const std::uint8_t* base = lv.kv.bytes().block_data(lv.group, lv.table.block(b));
    fn(base, std::max(first, b * bs) - b * bs, std::min(pos, b * bs + bs - 1) - b * bs);
  }
}

// fp16 K and V: llama.cpp's flash attention for the `group` query heads of KV head
// `kv_head`, scores soft-capped by `softcap` (0: not). q, out: [group][head_dim] (q rotated,
// not scaled).
void attend_f16(const LayerView& lv, std::int64_t kv_head, std::int64_t group, std::int64_t pos,
                float scale, float softcap, const float* q, float* out, Scratch& s) {
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
                    s.heads.data(), group, softcap);
  });
  for (std::int64_t h = 0; h < group; ++h) {
    ggml_flash_end(&s.acc[h * hd], s.heads[h], hd, out + h * hd);
  }
}

// Decodes the visible K or V vectors [s0, s1] of one KV head in a block into float rows
// buf [s1 - s0 + 1][row] (zero padded): every stored byte is decoded once per block for all the
// query heads of the group. Offset-int4 keys (float_attention.h, KeyTerms) decode to s * code,
// their scales to key_terms [s1 - s0 + 1][width] and the block's offsets to offsets [row].
void decode_rows(const LayerView& lv, KvSide side, std::int64_t kv_head, const std::uint8_t* base,
                 std::int64_t s0, std::int64_t s1, std::int64_t row, float* buf, float* offsets,
                 float* key_terms) {
  const KvBlockLayout& L = lv.L;
  const std::int64_t hd = L.head_dim;
  const KvDtype dtype = L.dtype(side);
  if (dtype == KvDtype::F16) {
    const auto* data =
        reinterpret_cast<const std::uint16_t*>(L.data(base, side, lv.layer, kv_head, s0));
    float_attention_rows_from_f16(data, L.data_stride(side) / 2, s1 - s0 + 1, hd, row, buf);
    return;
  }
  if (side == KvSide::K && dtype == KvDtype::Int4) {
    // one row of hd fp16 values (plus zero padding up to row, which offsets has room for)
    float_attention_rows_from_f16(L.k_offsets(base, lv.layer, kv_head), hd, 1, hd, row, offsets);
  }
  float_attention_rows_from_quantized(
      side, dtype, L.data(base, side, lv.layer, kv_head, s0), L.data_stride(side),
      L.scales(base, side, lv.layer, kv_head, s0), kv_scales_per_vector(side, dtype, hd),
      s1 - s0 + 1, hd, row, buf, key_terms);
}

// Float attention works on chunks of kChunkKeys consecutive positions (whole blocks, fixed by
// position, not by the thread count): each chunk's softmax state starts empty and the chunks
// of a query merge in position order. A long context's chunks can then run on different
// threads (one decoded token has only n_kv_heads items otherwise) and the result has the same
// bits whichever thread ran which chunk, and whether the token came alone or in a prompt.
constexpr std::int64_t kChunkKeys = 128;

// Per-thread buffers of the float path, grown once.
struct FloatScratch {
  std::vector<float> q;             // [heads][row]   scaled, zero padded
  std::vector<float> keys, values;  // [block_size][row]
  std::vector<float> offsets;       // [row]          a block's int4 key offsets, zero padded
  std::vector<float> key_terms;     // [block_size][width]  int4 keys' scales (KeyTerms::key)
  std::vector<float> scores;        // [heads][round_up(block_size, 8)]
};

// One float work unit: query heads [h0, h0 + n_heads) of KV head kv_head for token t, whose
// scores pass through the layer's soft-cap (0: none).
struct FloatTask {
  const LayerView& lv;
  std::int64_t kv_head, h0, n_heads, pos;
  std::int64_t row, chunk_blocks;
  float softcap = 0.0f;
};

// The chunks holding keys visible from `pos`: [first, last].
std::pair<std::int64_t, std::int64_t> chunk_range(const LayerView& lv, std::int64_t pos,
                                                  std::int64_t chunk_blocks) {
  const std::int64_t bs = lv.L.block_size;
  const std::int64_t first = lv.kv.first_visible_position(lv.group, pos);
  return {first / bs / chunk_blocks, pos / bs / chunk_blocks};
}

// Asks for one KV head's K and V (data, scales, Int4 key offsets) in the block at `base` to
// be brought into the cache while the current block is computed: a context's blocks lie
// anywhere in the pool, so the hardware prefetcher, which follows addresses, cannot guess the
// next one; without this every block starts with a wait for memory.
void prefetch_head(const LayerView& lv, std::int64_t kv_head, const std::uint8_t* base) {
#if defined(__GNUC__) || defined(__clang__)
  const KvBlockLayout& L = lv.L;
  const auto ask = [](const void* from, std::int64_t bytes) {
    for (std::int64_t off = 0; off < bytes; off += 64) {
      __builtin_prefetch(static_cast<const std::uint8_t*>(from) + off);
    }
  };
  for (const KvSide side : {KvSide::K, KvSide::V}) {
    ask(L.data(base, side, lv.layer, kv_head, 0), L.block_size * L.data_stride(side));
    const std::int64_t n_scales = kv_scales_per_vector(side, L.dtype(side), L.head_dim);
    if (n_scales > 0) ask(L.scales(base, side, lv.layer, kv_head, 0), L.block_size * n_scales * 2);
  }
  if (L.k_dtype == KvDtype::Int4) ask(L.k_offsets(base, lv.layer, kv_head), L.head_dim * 2);
#else
  (void)lv, (void)kv_head, (void)base;
#endif
}

// Sizes s for a task and fills s.q with its heads' queries (q: [n_heads][head_dim]) scaled
// by `scale`.
void prepare(const FloatTask& task, const float* q, float scale, FloatScratch& s) {
  const std::int64_t hd = task.lv.L.head_dim, bs = task.lv.L.block_size, row = task.row;
  s.q.assign(static_cast<std::size_t>(task.n_heads * row), 0.0f);
  for (std::int64_t h = 0; h < task.n_heads; ++h) {
    for (std::int64_t i = 0; i < hd; ++i) s.q[h * row + i] = q[h * hd + i] * scale;
  }
  s.keys.resize(static_cast<std::size_t>(bs * row));
  s.values.resize(static_cast<std::size_t>(bs * row));
  s.offsets.resize(static_cast<std::size_t>(row));  // hd values, zero padded
  s.key_terms.resize(static_cast<std::size_t>(bs * float_attention_key_terms_width(hd)));
  s.scores.resize(static_cast<std::size_t>(task.n_heads * float_attention_row(bs)));
}

// A prompt's tokens attend in tiles of up to kTileTokens consecutive positions per KV head:
// each block's K and V are decoded once for the tile instead of once per token (at a 4k
// context that decoding, repeated per token, was most of a prompt's time).
constexpr std::int64_t kTileTokens = 8;

// Buffers of a tile, grown once per thread.
struct TileScratch {
  FloatScratch one;                               // keys, values, offsets, scores
  std::vector<float> q;                           // [tile][heads][row]
  std::vector<float> q_terms;                     // [tile][heads][width]  KeyTerms::query
  std::vector<FloatAttentionState> chunk, total;  // [tile]
  std::int64_t n = 0;                             // tokens in the tile
  std::int64_t first[kTileTokens] = {};           // each token's first visible position
  std::int64_t pos[kTileTokens] = {};             // and its own
};

// Fills ts for tokens at positions task.pos + [0, nt): their scaled queries (q: token i's heads
// at q + i * q_dim), positions and first visible positions.
void prepare_tile(const FloatTask& task, std::int64_t nt, const float* q, std::int64_t q_dim,
                  float scale, TileScratch& ts) {
  const std::int64_t heads = task.n_heads, row = task.row, hd = task.lv.L.head_dim;
  const std::int64_t width = float_attention_key_terms_width(hd);
  ts.n = nt;
  ts.q.resize(static_cast<std::size_t>(nt * heads * row));
  ts.q_terms.resize(static_cast<std::size_t>(nt * heads * width));
  ts.chunk.resize(static_cast<std::size_t>(nt));
  ts.total.resize(static_cast<std::size_t>(nt));
  for (std::int64_t i = 0; i < nt; ++i) {
    FloatTask ti = task;
    ti.pos = task.pos + i;
    prepare(ti, q + i * q_dim, scale, ts.one);  // also sizes the block buffers
    std::copy(ts.one.q.begin(), ts.one.q.end(), ts.q.begin() + i * heads * row);
    if (task.lv.L.k_dtype == KvDtype::Int4) {
      for (std::int64_t h = 0; h < heads; ++h) {
        float_attention_key_query_terms(&ts.one.q[h * row], hd,
                                        &ts.q_terms[(i * heads + h) * width]);
      }
    }
    ts.pos[i] = ti.pos;
    ts.first[i] = task.lv.kv.first_visible_position(task.lv.group, ti.pos);
  }
}

// states[i] = the softmax state of the keys of chunk c that token i of the tile sees (empty
// when it sees none). Each block's K and V are decoded once for the tile; each token feeds the
// slots it sees, block by block in position order, so its state does not depend on the tile.
void attend_tile_chunk(const FloatTask& task, std::int64_t c, TileScratch& ts,
                       FloatAttentionState* states) {
  const LayerView& lv = task.lv;
  const std::int64_t bs = lv.L.block_size, cb = task.chunk_blocks, row = task.row;
  const std::int64_t width = float_attention_key_terms_width(lv.L.head_dim);
  // token i sees blocks [b0, b1] of this chunk (b0 > b1: none)
  std::int64_t b0[kTileTokens] = {}, b1[kTileTokens] = {}, lo = INT64_MAX, hi = -1;
  for (std::int64_t i = 0; i < ts.n; ++i) {
    states[i].reset(task.n_heads, row);
    b0[i] = std::max(ts.first[i] / bs, c * cb);
    b1[i] = std::min(ts.pos[i] / bs, c * cb + cb - 1);
    if (b0[i] > b1[i]) continue;
    lo = std::min(lo, b0[i]);
    hi = std::max(hi, b1[i]);
  }
  // slots [s0, s1] of block b that token i sees
  const auto slots = [&](std::int64_t i, std::int64_t b) {
    return std::pair{std::max(ts.first[i], b * bs) - b * bs,
                     std::min(ts.pos[i], b * bs + bs - 1) - b * bs};
  };
  // the same blocks read through the exact tail's fp16 copies (exact_tail.h)
  const std::optional<LayerView> exact =
      lv.tail ? std::optional<LayerView>(
                    LayerView{lv.kv, lv.tail->layout(), lv.table, lv.group, lv.layer, nullptr})
              : std::nullopt;
  for (std::int64_t b = lo; b <= hi; ++b) {
    const BlockId id = lv.table.block(b);
    const std::uint8_t* base = lv.kv.bytes().block_data(lv.group, id);
    if (b < hi)
      prefetch_head(lv, task.kv_head, lv.kv.bytes().block_data(lv.group, lv.table.block(b + 1)));
    const std::uint8_t* copy = lv.tail ? lv.tail->shadow(id) : nullptr;
    // token i reads this block from its fp16 copy when it has one and i is close enough; a
    // tile across a block boundary can have tokens of both kinds, each kind decoded once
    bool from_copy[kTileTokens] = {};
    for (std::int64_t i = 0; i < ts.n; ++i) {
      from_copy[i] = copy != nullptr && lv.tail->reads_exact(b, ts.pos[i]);
    }
    for (const bool kind : {false, true}) {
      std::int64_t s0u = bs, s1u = -1;  // the slots any token of this kind sees, decoded once
      for (std::int64_t i = 0; i < ts.n; ++i) {
        if (b < b0[i] || b > b1[i] || from_copy[i] != kind) continue;
        const auto [s0, s1] = slots(i, b);
        s0u = std::min(s0u, s0);
        s1u = std::max(s1u, s1);
      }
      if (s1u < s0u) continue;
      const LayerView& from = kind ? *exact : lv;
      const std::uint8_t* bytes = kind ? copy : base;
      decode_rows(from, KvSide::K, task.kv_head, bytes, s0u, s1u, row, ts.one.keys.data(),
                  ts.one.offsets.data(), ts.one.key_terms.data());
      decode_rows(from, KvSide::V, task.kv_head, bytes, s0u, s1u, row, ts.one.values.data(),
                  ts.one.offsets.data(), nullptr);
      const bool k4 = from.L.k_dtype == KvDtype::Int4;
      for (std::int64_t i = 0; i < ts.n; ++i) {
        if (b < b0[i] || b > b1[i] || from_copy[i] != kind) continue;
        const auto [s0, s1] = slots(i, b);
        const KeyTerms terms{&ts.one.key_terms[(s0 - s0u) * width],
                             &ts.q_terms[i * task.n_heads * width], ts.one.offsets.data(), width};
        float_attention_keys(&ts.q[i * task.n_heads * row], &ts.one.keys[(s0 - s0u) * row],
                             &ts.one.values[(s0 - s0u) * row], s1 - s0 + 1, states[i],
                             ts.one.scores.data(), k4 ? &terms : nullptr, task.softcap);
      }
    }
  }
}

// Float attention of tokens [t0, t0 + nt) (positions task.pos + i) for query heads
// [h0, h0 + n_heads) of KV head kv_head: per chunk the tile's states, merged in position order
// (a chunk a token does not see leaves its state empty, and merging an empty state changes
// nothing).
//   q, out: [n_tokens][q_dim], the tile's heads at (t * q_dim + first_head * head_dim)
void attend_tile(const FloatTask& task, std::int64_t nt, const float* q, float* out,
                 std::int64_t q_dim, float scale, TileScratch& ts) {
  const std::int64_t bs = task.lv.L.block_size, cb = task.chunk_blocks;
  prepare_tile(task, nt, q, q_dim, scale, ts);
  for (std::int64_t i = 0; i < nt; ++i) ts.total[i].reset(task.n_heads, task.row);
  for (std::int64_t c = ts.first[0] / bs / cb; c <= ts.pos[nt - 1] / bs / cb; ++c) {
    attend_tile_chunk(task, c, ts, ts.chunk.data());
    for (std::int64_t i = 0; i < nt; ++i) float_attention_merge(ts.total[i], ts.chunk[i]);
  }
  for (std::int64_t i = 0; i < nt; ++i) {
    float_attention_end(ts.total[i], task.lv.L.head_dim, out + i * q_dim);
  }
}

// How work is cut. A (token, KV head) item reads its keys once for all its query heads; when
// there are fewer such items than threads can share (decoding one token), the chunks of a
// long context become items of their own, and if those are still few the query heads of a
// group are split into parts (each part reads the group's keys again: worth it only then).
struct FloatPlan {
  std::int64_t parts = 1, part_heads = 1;
  bool split_chunks = false;
};

FloatPlan plan_float(std::int64_t n_tokens, std::int64_t n_kv_heads, std::int64_t group,
                     std::int64_t max_chunks, int threads) {
  FloatPlan p;
  const std::int64_t want = 2 * static_cast<std::int64_t>(threads);
  std::int64_t items = n_tokens * n_kv_heads;
  if (items < want && max_chunks > 1) {
    p.split_chunks = true;
    items *= max_chunks;
  }
  p.parts = items >= want ? 1 : std::min(group, (want + items - 1) / items);
  p.part_heads = (group + p.parts - 1) / p.parts;
  return p;
}

// Float attention: (tile of tokens, KV head, part) items for a prompt; with split_chunks (a
// decoded token) each chunk of the context is attended by whichever thread claims it and the
// chunks are merged afterwards, in order.
void float_attention(ThreadPool& pool, const LayerView& lv, const AttentionShape& shape,
                     std::int64_t start_pos, std::int64_t n_tokens, const float* q, float* out) {
  const std::int64_t hd = shape.head_dim, q_dim = shape.n_heads * hd;
  const std::int64_t group = shape.n_heads / shape.n_kv_heads;
  const std::int64_t row = float_attention_row(hd);
  const std::int64_t chunk_blocks = std::max<std::int64_t>(1, kChunkKeys / lv.L.block_size);
  // chunks any of the tokens sees (a sliding window moves with the position)
  const std::int64_t c_lo = chunk_range(lv, start_pos, chunk_blocks).first;
  const std::int64_t c_hi = chunk_range(lv, start_pos + n_tokens - 1, chunk_blocks).second;
  const FloatPlan plan =
      plan_float(n_tokens, shape.n_kv_heads, group, c_hi - c_lo + 1, pool.size());
  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
  const std::int64_t units = n_tokens * shape.n_kv_heads * plan.parts;
  // the task of a unit (token, KV head, part), with its first query value
  const auto task_of = [&](std::int64_t unit, std::int64_t* first) {
    const std::int64_t t = unit / (shape.n_kv_heads * plan.parts);
    const std::int64_t kvh = unit / plan.parts % shape.n_kv_heads;
    const std::int64_t h0 = unit % plan.parts * plan.part_heads;
    *first = t * q_dim + (kvh * group + h0) * hd;  // heads of a group are adjacent in q, out
    FloatTask task{lv,  kvh,         h0, std::min(plan.part_heads, group - h0), start_pos + t,
                   row, chunk_blocks};
    task.softcap = shape.softcap;
    return task;
  };
  if (!plan.split_chunks) {  // (tile of tokens, KV head, part) items
    const std::int64_t tile = std::clamp<std::int64_t>(
        n_tokens * shape.n_kv_heads / (4 * static_cast<std::int64_t>(pool.size())), 1, kTileTokens);
    const std::int64_t n_tiles = (n_tokens + tile - 1) / tile;
    const std::int64_t per_tile = shape.n_kv_heads * plan.parts;
    pool.parallel_for(n_tiles * per_tile, [&](std::int64_t begin, std::int64_t end) {
      thread_local TileScratch ts;
      for (std::int64_t item = begin; item < end; ++item) {
        const std::int64_t t0 = item / per_tile * tile;
        std::int64_t first = 0;  // of token t0
        const FloatTask task = task_of(t0 * per_tile + item % per_tile, &first);
        if (task.n_heads <= 0) continue;
        attend_tile(task, std::min(tile, n_tokens - t0), q + first, out + first, q_dim, scale, ts);
      }
    });
    return;
  }
  // a token alone (or a few): the chunks of its context are items of their own, each with its
  // own state, merged in order below
  const std::int64_t n_chunks = c_hi - c_lo + 1;
  thread_local std::vector<FloatAttentionState> partial;  // [units][n_chunks]
  if (partial.size() < static_cast<std::size_t>(units * n_chunks)) {
    partial.resize(static_cast<std::size_t>(units * n_chunks));
  }
  FloatAttentionState* const partials = partial.data();
  pool.parallel_for(units * n_chunks, [&](std::int64_t begin, std::int64_t end) {
    thread_local TileScratch ts;
    for (std::int64_t item = begin; item < end; ++item) {
      std::int64_t first = 0;
      const FloatTask task = task_of(item / n_chunks, &first);
      if (task.n_heads <= 0) continue;
      prepare_tile(task, 1, q + first, q_dim, scale, ts);  // a tile of one token
      attend_tile_chunk(task, c_lo + item % n_chunks, ts, &partials[item]);
    }
  });
  thread_local FloatAttentionState total;
  for (std::int64_t unit = 0; unit < units; ++unit) {
    std::int64_t first = 0;
    const FloatTask task = task_of(unit, &first);
    if (task.n_heads <= 0) continue;
    total.reset(task.n_heads, row);
    for (std::int64_t c = 0; c < n_chunks; ++c)
      float_attention_merge(total, partials[unit * n_chunks + c]);
    float_attention_end(total, hd, out + first);
  }
}

// llama.cpp's fp16 flash attention for every (token, KV head, part) item; parts as above.
void ggml_order_attention(ThreadPool& pool, const LayerView& lv, const AttentionShape& shape,
                          std::int64_t start_pos, std::int64_t n_tokens, const float* q,
                          float* out) {
  const std::int64_t hd = shape.head_dim, q_dim = shape.n_heads * hd;
  const std::int64_t group = shape.n_heads / shape.n_kv_heads;
  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));  // llama.cpp's kq_scale
  const FloatPlan plan = plan_float(n_tokens, shape.n_kv_heads, group, 1, pool.size());
  const std::int64_t items = n_tokens * shape.n_kv_heads;
  pool.parallel_for(items * plan.parts, [&](std::int64_t begin, std::int64_t end) {
    Scratch s;
    for (std::int64_t item = begin; item < end; ++item) {
      const std::int64_t t = item / (shape.n_kv_heads * plan.parts);
      const std::int64_t kvh = item / plan.parts % shape.n_kv_heads;
      const std::int64_t h0 = item % plan.parts * plan.part_heads;
      const std::int64_t n_heads = std::min(plan.part_heads, group - h0);
      if (n_heads <= 0) continue;
      const std::int64_t first = t * q_dim + (kvh * group + h0) * hd;
      attend_f16(lv, kvh, n_heads, start_pos + t, scale, shape.softcap, q + first, out + first, s);
    }
  });
}

}  // namespace

void paged_attention(ThreadPool& pool, const KvCacheManager& kv, SeqId seq, std::int64_t layer,
                     const AttentionShape& shape, std::int64_t start_pos, std::int64_t n_tokens,
                     std::span<const float> q, std::span<float> out, AttentionMath math) {
  const std::int64_t q_dim = shape.n_heads * shape.head_dim;
  if (static_cast<std::int64_t>(q.size()) != n_tokens * q_dim ||
      static_cast<std::int64_t>(out.size()) != n_tokens * q_dim) {
    throw_error<UsageError>("paged_attention: q has {} and out {} values, expected {} x {}",
                            q.size(), out.size(), n_tokens, q_dim);
  }
  if (n_tokens == 0) return;
  const std::int64_t g = kv.group_of_layer(layer);
  const LayerView lv{
      kv, kv.layout(g), kv.block_table(seq, g), g, kv.layer_in_group(layer), kv.exact_tail(g)};
  const bool f16 = lv.L.k_dtype == KvDtype::F16 && lv.L.v_dtype == KvDtype::F16;
  if (f16 && math == AttentionMath::GgmlOrder) {
    ggml_order_attention(pool, lv, shape, start_pos, n_tokens, q.data(), out.data());
  } else {
    float_attention(pool, lv, shape, start_pos, n_tokens, q.data(), out.data());
  }
}

}  // namespace kvscope
