// The reference attention: one query of one sequence, read from the paged cache key by key
// and summed in double, the plain loop every faster attention is tested against (the CPU
// decoder's paged_attention, the CUDA kernels). No tiles, threads, SIMD or online softmax.
#pragma once

#include <cstdint>
#include <span>

#include "cpu/attention/attention_shape.h"
#include "kv/kv_cache_manager.h"
#include "kv/kv_ids.h"

namespace kvscope {

// out = softmax(cap(q k^T / sqrt(head_dim))) v over the keys the query at query_pos sees: from
// the layer group's first visible position (its sliding window) to query_pos itself;
// cap(s) = shape.softcap * tanh(s / shape.softcap), or s when the shape has no soft-cap.
//   q:   [n_heads][head_dim], already rotated
//   out: [n_heads][head_dim]
// Query head h reads KV head h / (n_heads / n_kv_heads). Each key and value is decoded by its
// format (kv_format.h; an Int4 key against its block's offsets); a block that the group's
// exact tail reads exactly for this query and that has an fp16 copy is read from the copy
// (exact_tail.h), as the decoders do. The K/V of positions up to query_pos must be written.
void reference_attention(const KvCacheManager& kv, SeqId seq, std::int64_t layer,
                         const AttentionShape& shape, std::int64_t query_pos,
                         std::span<const float> q, std::span<float> out);

}  // namespace kvscope
