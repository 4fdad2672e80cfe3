// How many fp16 copies a cache's exact tail (kv/exact_tail.h) gets where the backend reads
// one. The engine sets its cache up with this, and the planner's CPU plans use it, so that
// a plan's pool is the engine's byte for byte.
//
// Each of `sequences` sequences decoded together holds its tail blocks plus the block a step
// starts in, and a step's step_tokens can open step_tokens / block_size blocks more:
//   copies = sequences x (tail + 1) + ceil(step_tokens / block_size)
// never more than the pool's blocks (config.n_blocks, when set), and under a KV budget
// (config.budget_bytes) at most a quarter of it; none when that does not hold one sequence's
// tail. A block that finds no copy free is read quantized, so this bounds memory, not
// correctness. Nothing quantized, or tail_blocks 0: the config is left without a tail.
#pragma once

#include <cstdint>

#include "kv/kv_cache_config.h"

namespace kvscope {

// Blocks of exact tail where the backend reads one and nothing else is asked: the query's
// own block and the one before.
inline constexpr std::int64_t kDefaultExactTailBlocks = 2;

// The sequences the engine sizes its copies for unless told otherwise (its
// EngineOptions::default_sequences).
inline constexpr std::int64_t kExactTailSequences = 4;

void apply_exact_tail(KvCacheConfig& config, std::int64_t tail_blocks, std::int64_t sequences,
                      std::int64_t step_tokens);

}  // namespace kvscope
