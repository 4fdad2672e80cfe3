#include "plan/kv_footprint.h"

#include <algorithm>
#include <limits>

#include "kv/format/kv_format.h"
#include "plan/model_layer_groups.h"
#include "util/error.h"

namespace kvscope {

namespace {

constexpr std::int64_t kInt64Max = std::numeric_limits<std::int64_t>::max();

std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
  return (a + b - 1) / b;
}

// a x b for non-negative values, saturating instead of overflowing: a plan for an absurd
// request then reads "needs 9.2 EB" and does not fit, rather than wrapping to a small number.
std::int64_t mul_sat(std::int64_t a, std::int64_t b) {
  if (a == 0 || b == 0) return 0;
  return a > kInt64Max / b ? kInt64Max : a * b;
}

std::int64_t add_sat(std::int64_t a, std::int64_t b) {
  return a > kInt64Max - b ? kInt64Max : a + b;
}

const LayerGroupConfig& group_at(const KvCacheConfig& config, std::size_t group) {
  if (group >= config.groups.size()) {
    throw_error<UsageError>("KV plan: layer group {} out of range [0, {})", group,
                            config.groups.size());
  }
  return config.groups[group];
}

void check_tokens(std::int64_t tokens, std::int64_t step) {
  if (tokens < 0) throw_error<UsageError>("KV plan: {} tokens (must be >= 0)", tokens);
  if (step < 1) throw_error<UsageError>("KV plan: grow step {} tokens (must be >= 1)", step);
}

// Blocks a window has released when a grow starts at length T (KvCacheManager's
// window_blocks_to_drop): those ending before T - window + 1.
std::int64_t dropped_before(std::int64_t window, std::int64_t block_size, std::int64_t t) {
  if (window == 0) return 0;
  const std::int64_t keep_from = t - window + 1;
  return keep_from > 0 ? keep_from / block_size : 0;
}

// Blocks held right after the grow that starts at length t and ends at length end.
std::int64_t held_after_grow(std::int64_t window, std::int64_t block_size, std::int64_t t,
                             std::int64_t end) {
  return ceil_div(end, block_size) - dropped_before(window, block_size, t);
}

}  // namespace

KvCacheConfig with_window_pools(KvCacheConfig config, std::int64_t batch, std::int64_t step) {
  if (config.window_sequences == 0) {
    config.window_sequences = std::max(batch, kDefaultWindowSequences);
  }
  if (config.max_grow_tokens == 0) config.max_grow_tokens = step;
  return config;
}

KvCacheConfig default_kv_config(const ModelSpec& spec, KvDtype k_dtype, KvDtype v_dtype,
                                std::int64_t block_size) {
  KvCacheConfig config;
  config.groups = model_layer_groups(spec, k_dtype, v_dtype);
  config.n_kv_heads = spec.n_kv_heads;
  config.head_dim = spec.head_dim;
  config.block_size = block_size;
  config.max_context = spec.context_length;
  return config;
}

double kv_bytes_per_token(const KvCacheConfig& config) {
  return static_cast<double>(kv_block_set_bytes(config)) / static_cast<double>(config.block_size);
}

std::int64_t kv_block_set_bytes(const KvCacheConfig& config) {
  std::int64_t total = 0;
  for (std::size_t g = 0; g < config.groups.size(); ++g) {
    total = add_sat(total, kv_group_layout(config, g).block_bytes());
  }
  return total;
}

std::int64_t kv_blocks_held(const KvCacheConfig& config, std::size_t group, std::int64_t tokens,
                            std::int64_t last_step) {
  const LayerGroupConfig& g = group_at(config, group);
  check_tokens(tokens, last_step);
  if (tokens == 0) return 0;
  const std::int64_t start = std::max<std::int64_t>(0, tokens - last_step);
  return held_after_grow(g.window, config.block_size, start, tokens);
}

std::int64_t kv_peak_blocks(const KvCacheConfig& config, std::size_t group, std::int64_t tokens,
                            std::int64_t step) {
  const LayerGroupConfig& g = group_at(config, group);
  check_tokens(tokens, step);
  const std::int64_t bs = config.block_size;
  if (tokens == 0) return 0;
  if (g.window == 0) return ceil_div(tokens, bs);

  // Grows start at T_k = k * step, k = 0 .. last, and end at min(T_k + step, tokens).
  const std::int64_t last = (tokens - 1) / step;
  auto held = [&](std::int64_t k) {
    const std::int64_t t = k * step;
    return held_after_grow(g.window, bs, t, std::min(tokens, t + step));
  };
  // Until the window releases anything (T < window - 1 + block_size) the count only rises,
  // so the last grow of that stretch is its maximum.
  const std::int64_t growing = std::min(last + 1, ceil_div(g.window - 1 + bs, step));
  std::int64_t peak = growing > 0 ? held(growing - 1) : 0;
  // After it, a full step's count depends only on T mod block_size (shifting T by a block
  // adds one block at the end and releases one at the front), which repeats within
  // block_size steps; the last, shorter grow is checked on its own.
  const std::int64_t stop = std::min(last, growing + bs);
  for (std::int64_t k = growing; k <= stop; ++k) peak = std::max(peak, held(k));
  return std::max(peak, held(last));
}

std::int64_t kv_bytes_read_per_token(const KvCacheConfig& config, std::int64_t context) {
  if (context < 0) throw_error<UsageError>("KV plan: context {} (must be >= 0)", context);
  std::int64_t total = 0;
  for (const LayerGroupConfig& g : config.groups) {
    const std::int64_t visible = g.window > 0 ? std::min(context, g.window) : context;
    const std::int64_t per_slot =
        kv_slot_bytes_per_layer(g.k_dtype, g.v_dtype, config.n_kv_heads, config.head_dim);
    const std::int64_t per_block =
        kv_block_offset_bytes_per_layer(g.k_dtype, config.n_kv_heads, config.head_dim);
    const std::int64_t per_layer = add_sat(
        mul_sat(visible, per_slot), mul_sat(ceil_div(visible, config.block_size), per_block));
    total = add_sat(total, mul_sat(per_layer, static_cast<std::int64_t>(g.layers.size())));
  }
  return total;
}

KvFootprint kv_footprint(const KvCacheConfig& config, std::int64_t batch, std::int64_t tokens,
                         std::int64_t step) {
  if (batch < 0) throw_error<UsageError>("KV plan: batch {} (must be >= 0)", batch);
  check_tokens(tokens, step);
  // The last grow of 0, step, 2 step, ... adds what is left over: tokens - its start.
  const std::int64_t last_step = tokens > 0 ? tokens - (tokens - 1) / step * step : step;
  KvFootprint f;
  for (std::size_t g = 0; g < config.groups.size(); ++g) {
    KvGroupFootprint gf;
    gf.block_bytes = kv_group_layout(config, g).block_bytes();
    gf.held_blocks = mul_sat(batch, kv_blocks_held(config, g, tokens, last_step));
    gf.peak_blocks = mul_sat(batch, kv_peak_blocks(config, g, tokens, step));
    f.held_bytes = add_sat(f.held_bytes, mul_sat(gf.held_blocks, gf.block_bytes));
    f.blocks_per_group_needed = std::max(f.blocks_per_group_needed, gf.peak_blocks);
    f.groups.push_back(gf);
  }
  const std::vector<std::int64_t> pools = kv_group_pool_blocks(config, f.blocks_per_group_needed);
  for (std::size_t g = 0; g < f.groups.size(); ++g) {
    f.groups[g].pool_blocks = pools[g];
    f.windows_hold = f.windows_hold && f.groups[g].peak_blocks <= pools[g];
  }
  f.pool_bytes_needed =
      add_sat(kv_group_pools_bytes(config, f.blocks_per_group_needed), kv_exact_tail_bytes(config));
  return f;
}

}  // namespace kvscope
