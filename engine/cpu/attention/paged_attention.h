// The CPU decoder's paged GQA attention: tiled, threaded and SIMD, tested against the plain
// reference_attention.h. For each new token of one sequence and each KV head, the keys and
// values are read from the sequence's blocks once and serve all query heads of that KV head's
// group.
#pragma once

#include <cstdint>
#include <span>

#include "cpu/attention/attention_shape.h"
#include "kv/kv_cache_manager.h"
#include "kv/kv_ids.h"

namespace kvscope {

class ThreadPool;

// The arithmetic of attention over an fp16 cache (quantized caches always take Float):
//   GgmlOrder  llama.cpp's CPU flash attention operation for operation (fp16 query, fp16
//              accumulator, one key at a time; ggml_flash_attn.h): the reference decoder
//              must reproduce llama.cpp's log-probabilities, and on an fp16 cache that takes
//              the same roundings, not just the same math. One thread per (token, KV head).
//   Float      float softmax attention (float_attention.h): keys and values decoded once per
//              block for the group, SIMD scores, exponentials and sums, and a long context
//              split into chunks of positions that threads share when one token is decoded.
//              Closer to exact attention than GgmlOrder, and faster at long contexts
//              (bench measures it); what the engine runs unless asked for the exact
//              reference path.
enum class AttentionMath { GgmlOrder, Float };

// out = softmax(cap(q k^T / sqrt(head_dim))) v over the keys each query may see (causal, and
// the layer group's sliding window), reading K/V from the paged cache of `seq` in `layer`;
// cap(s) = shape.softcap * tanh(s / shape.softcap), or s when the shape has no soft-cap.
//   q:   [n_tokens][n_heads][head_dim], token i at position start_pos + i (already rotated)
//   out: [n_tokens][n_heads][head_dim]
// The K/V of positions up to start_pos + n_tokens - 1 must already be written.
// Softmax is computed online (running max and sum, as flash attention does), so no buffer
// grows with the context. `math` chooses the arithmetic on an F16 cache (above); Int8 / Int4
// caches (llama.cpp has none to match) always take Float, with each block's K and V of a KV
// head dequantized once (Int4 key offsets decoded once per block) for all the query heads of
// its group; with the group's exact tail on, the newest blocks a query reads exactly come from
// their fp16 copies instead (exact_tail.h). Either way the result does not depend on the thread
// count, on how the blocks lie in the pool, or on which other tokens came in the same call.
void paged_attention(ThreadPool& pool, const KvCacheManager& kv, SeqId seq, std::int64_t layer,
                     const AttentionShape& shape, std::int64_t start_pos, std::int64_t n_tokens,
                     std::span<const float> q, std::span<float> out,
                     AttentionMath math = AttentionMath::GgmlOrder);

}  // namespace kvscope
