// The KV cache's memory as the paged allocator (engine/kv) takes it, computed without
// running the allocator: per layer group, whole blocks of kv_group_layout().block_bytes(),
// blocks a sliding window has released not counted, every full group's pool the same size
// and a sliding-window group's at most its cap (kv_cache_config.h). The planner and KvCacheManager
// share the bytes function (kv_bytes_per_block_per_layer), the block layout and the pool sizing
// (kv_group_pool_blocks), so these numbers are the allocator's.
//
// Growth model. A sequence reaches `tokens` tokens through grow() calls of `step` tokens
// (the last one shorter when step does not divide tokens): step = prefill chunk while the
// prompt is read, 1 while decoding. Only sliding-window groups care: grow() from length T
// first releases the blocks that end before T - window + 1 (the oldest key the query at T
// sees), then appends n, so the blocks held right after a grow are
//     ceil((T + n) / block_size) - max(0, floor((T - window + 1) / block_size))
// and the most a sequence ever holds at once is the largest of these over its grows.
// Full-attention groups hold ceil(tokens / block_size) blocks at every moment.
#pragma once

#include <cstdint>
#include <vector>

#include "kv/kv_cache_config.h"
#include "model/model_spec.h"

namespace kvscope {

// The sequences a sliding-window group's pool is sized for at its cap unless a plan's batch
// is larger: the engine's EngineOptions::default_sequences.
inline constexpr std::int64_t kDefaultWindowSequences = 4;

// The cache with the sliding-window pools the engine gives it (kv_cache_config.h): as
// `config` has them, else sized for max(batch, kDefaultWindowSequences) sequences growing
// `step` tokens at a time. Every count the planner shows goes through this.
KvCacheConfig with_window_pools(KvCacheConfig config, std::int64_t batch, std::int64_t step);

// The cache the engine builds for a model by default: the model's layer groups
// (model_layer_groups: one with every layer, or the sliding layers and the global ones),
// the given K and V dtypes and max_context = the model's context length. budget_bytes / n_blocks
// are left 0: the planner (or the engine) sets the budget.
KvCacheConfig default_kv_config(const ModelSpec& spec, KvDtype k_dtype, KvDtype v_dtype,
                                std::int64_t block_size = 16);

// K+V bytes one token takes over all layers, before block rounding, for display:
//   kv_block_set_bytes / block_size
//   = sum over groups of n_layers(g) x kv_bytes_per_block_per_layer(k(g), v(g), heads, dim,
//     block_size) / block_size,
// fractional when a block's Int4 K offsets do not divide evenly among its slots.
double kv_bytes_per_token(const KvCacheConfig& config);

// Bytes one block of each group takes, added up: the pool's unit of growth while no
// sliding-window group is at its cap (kv_cache_config.h).
std::int64_t kv_block_set_bytes(const KvCacheConfig& config);

// Blocks a sequence holds in `group` right after the grow() that took it from
// tokens - last_step to `tokens` tokens.
std::int64_t kv_blocks_held(const KvCacheConfig& config, std::size_t group, std::int64_t tokens,
                            std::int64_t last_step);

// The most blocks a sequence holds in `group` at any moment while it grows from 0 to
// `tokens` in steps of `step` tokens. O(block_size) at most, whatever `tokens` is.
std::int64_t kv_peak_blocks(const KvCacheConfig& config, std::size_t group, std::int64_t tokens,
                            std::int64_t step);

// Bytes of K and V attention reads to decode one token at position context - 1: every
// visible key and value of every layer, min(context, window) = n tokens per group, plus the
// Int4 K offsets of ceil(n / block_size) blocks.
std::int64_t kv_bytes_read_per_token(const KvCacheConfig& config, std::int64_t context);

// `batch` sequences of `tokens` tokens each, grown in steps of `step` (all in lockstep, as
// a batch decodes), per group and in total.
struct KvGroupFootprint {
  std::int64_t block_bytes = 0;  // one block of this group
  std::int64_t held_blocks = 0;  // held at the end, all sequences
  std::int64_t peak_blocks = 0;  // held at the busiest moment, all sequences
  // The group's pool when the full groups get blocks_per_group_needed (kv_group_pool_blocks:
  // a sliding-window group's is capped at window_sequences sequences' worth).
  std::int64_t pool_blocks = 0;
};

struct KvFootprint {
  std::vector<KvGroupFootprint> groups;
  std::int64_t held_bytes = 0;  // sum over groups of held_blocks x block_bytes
  // n, the blocks the pool must give the full groups: the most any group's peak takes.
  std::int64_t blocks_per_group_needed = 0;
  // sum over groups of pool_blocks x block_bytes (kv_group_pools_bytes), plus the exact
  // tail's fp16 copies (kv_exact_tail_bytes: a fixed set, whatever the batch)
  std::int64_t pool_bytes_needed = 0;
  // false when a capped window group cannot hold its peak whatever the budget: more
  // sequences past the window than its pool was sized for (window_sequences).
  bool windows_hold = true;
};

KvFootprint kv_footprint(const KvCacheConfig& config, std::int64_t batch, std::int64_t tokens,
                         std::int64_t step);

}  // namespace kvscope
