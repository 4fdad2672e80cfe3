#include "kv/kv_cache_config.h"

#include <algorithm>
#include <limits>

#include "util/error.h"

namespace kvscope {

std::vector<LayerGroupConfig> uniform_layer_groups(std::int64_t n_layers, KvDtype dtype,
                                                   std::int64_t window) {
  LayerGroupConfig group;
  for (std::int64_t l = 0; l < n_layers; ++l) group.layers.push_back(l);
  group.k_dtype = dtype;
  group.v_dtype = dtype;
  group.window = window;
  return {group};
}

std::int64_t kv_config_n_layers(const KvCacheConfig& config) {
  std::int64_t n = 0;
  for (const LayerGroupConfig& g : config.groups) n += static_cast<std::int64_t>(g.layers.size());
  return n;
}

void validate(const KvCacheConfig& config) {
  if (config.groups.empty()) throw_error<UsageError>("KV cache config: no layer groups");
  const std::int64_t n_layers = kv_config_n_layers(config);
  std::vector<int> seen(static_cast<std::size_t>(n_layers), 0);
  for (std::size_t g = 0; g < config.groups.size(); ++g) {
    const LayerGroupConfig& group = config.groups[g];
    if (group.layers.empty())
      throw_error<UsageError>("KV cache config: layer group {} is empty", g);
    if (group.window < 0) {
      throw_error<UsageError>("KV cache config: layer group {} has window {} < 0", g, group.window);
    }
    for (const std::int64_t layer : group.layers) {
      if (layer < 0 || layer >= n_layers) {
        throw_error<UsageError>("KV cache config: layer group {} names layer {}, outside [0, {})",
                                g, layer, n_layers);
      }
      if (seen[static_cast<std::size_t>(layer)]++) {
        throw_error<UsageError>("KV cache config: layer {} is in more than one group", layer);
      }
    }
  }
  if (config.max_context < 1) {
    throw_error<UsageError>("KV cache config: max_context {} < 1", config.max_context);
  }
  if ((config.budget_bytes > 0) == (config.n_blocks > 0) || config.budget_bytes < 0 ||
      config.n_blocks < 0) {
    throw_error<UsageError>(
        "KV cache config: give exactly one of budget_bytes ({}) and n_blocks ({}) as > 0",
        config.budget_bytes, config.n_blocks);
  }
  for (std::size_t g = 0; g < config.groups.size(); ++g) kv_group_layout(config, g);  // sizes
  if (config.window_sequences < 0 || config.max_grow_tokens < 0) {
    throw_error<UsageError>(
        "KV cache config: window pools for {} sequences growing {} tokens at a time (>= 0)",
        config.window_sequences, config.max_grow_tokens);
  }
  if (config.exact_tail_blocks < 0 || config.exact_tail_shadows < 0 ||
      (config.exact_tail_blocks > 0) != (config.exact_tail_shadows > 0)) {
    throw_error<UsageError>(
        "KV cache config: exact tail of {} blocks with {} fp16 copies (both > 0, or both 0)",
        config.exact_tail_blocks, config.exact_tail_shadows);
  }
}

bool kv_group_on_host(const KvCacheConfig& config, std::size_t group) {
  return config.host_storage && !config.groups.at(group).on_device;
}

bool kv_group_has_exact_tail(const KvCacheConfig& config, std::size_t group) {
  const LayerGroupConfig& g = config.groups.at(group);
  return config.exact_tail_blocks > 0 && (g.k_dtype != KvDtype::F16 || g.v_dtype != KvDtype::F16);
}

std::int64_t kv_group_exact_tail_bytes(const KvCacheConfig& config, std::size_t group) {
  if (!kv_group_has_exact_tail(config, group)) return 0;
  const LayerGroupConfig& g = config.groups[group];
  const KvBlockLayout f16 =
      KvBlockLayout::make(KvDtype::F16, KvDtype::F16, static_cast<std::int64_t>(g.layers.size()),
                          config.n_kv_heads, config.head_dim, config.block_size);
  return config.exact_tail_shadows * f16.block_bytes();
}

std::int64_t kv_exact_tail_bytes(const KvCacheConfig& config) {
  std::int64_t bytes = 0;
  for (std::size_t g = 0; g < config.groups.size(); ++g) {
    bytes += kv_group_exact_tail_bytes(config, g);
  }
  return bytes;
}

std::int64_t kv_exact_tail_bytes(const KvCacheConfig& config, bool on_host) {
  std::int64_t bytes = 0;
  for (std::size_t g = 0; g < config.groups.size(); ++g) {
    if (kv_group_on_host(config, g) == on_host) bytes += kv_group_exact_tail_bytes(config, g);
  }
  return bytes;
}

KvBlockLayout kv_group_layout(const KvCacheConfig& config, std::size_t group) {
  const LayerGroupConfig& g = config.groups.at(group);
  return KvBlockLayout::make(g.k_dtype, g.v_dtype, static_cast<std::int64_t>(g.layers.size()),
                             config.n_kv_heads, config.head_dim, config.block_size);
}

std::int64_t kv_sequence_cap_blocks(const KvCacheConfig& config, std::size_t group) {
  const std::int64_t bs = config.block_size;
  const std::int64_t full = (config.max_context + bs - 1) / bs;
  const std::int64_t window = config.groups.at(group).window;
  if (window == 0 || config.max_grow_tokens < 1) return full;
  return std::min(full, (window + config.max_grow_tokens + 2 * bs - 3) / bs);  // ceil, see .h
}

namespace {

// A group's pool cap (window_sequences full sets), or -1 when it has none.
std::int64_t pool_cap(const KvCacheConfig& config, std::size_t group) {
  if (config.groups[group].window == 0 || config.window_sequences < 1 ||
      config.max_grow_tokens < 1) {
    return -1;
  }
  const std::int64_t per_sequence = kv_sequence_cap_blocks(config, group);
  // both factors < 2^31 in any real config; saturate rather than wrap for absurd ones
  return per_sequence > (std::int64_t{1} << 62) / config.window_sequences
             ? std::int64_t{1} << 62
             : per_sequence * config.window_sequences;
}

}  // namespace

std::vector<std::int64_t> kv_group_pool_blocks(const KvCacheConfig& config, std::int64_t n) {
  std::vector<std::int64_t> blocks;
  for (std::size_t g = 0; g < config.groups.size(); ++g) {
    const std::int64_t cap = pool_cap(config, g);
    blocks.push_back(cap < 0 ? n : std::min(n, cap));
  }
  return blocks;
}

std::int64_t kv_group_pools_bytes(const KvCacheConfig& config, std::int64_t n) {
  const std::vector<std::int64_t> blocks = kv_group_pool_blocks(config, n);
  std::int64_t bytes = 0;
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  for (std::size_t g = 0; g < blocks.size(); ++g) {
    const std::int64_t b = kv_group_layout(config, g).block_bytes();
    if (blocks[g] > (kMax - bytes) / b) return kMax;  // saturate: an absurd size never fits
    bytes += blocks[g] * b;
  }
  return bytes;
}

namespace {

// The largest n in [0, hi) whose pools take at most `bytes`, hi itself taking more.
std::int64_t largest_below(const KvCacheConfig& config, std::int64_t bytes, std::int64_t hi) {
  std::int64_t lo = 0;  // 0 blocks take 0 bytes
  while (hi - lo > 1) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    (kv_group_pools_bytes(config, mid) <= bytes ? lo : hi) = mid;
  }
  return lo;
}

// The largest n whose pools take at most `bytes` (0 when one block each does not fit).
// The pools' bytes rise with n and stop rising once every group is at its cap.
std::int64_t largest_n_within(const KvCacheConfig& config, std::int64_t bytes) {
  std::int64_t uncapped_bytes = 0;  // bytes one more n adds past every cap
  std::int64_t largest_cap = 0;
  for (std::size_t g = 0; g < config.groups.size(); ++g) {
    const std::int64_t cap = pool_cap(config, g);
    if (cap < 0) uncapped_bytes += kv_group_layout(config, g).block_bytes();
    largest_cap = std::max(largest_cap, cap);
  }
  if (uncapped_bytes == 0) {  // only capped groups: n past the largest cap changes nothing
    if (kv_group_pools_bytes(config, largest_cap) <= bytes) return largest_cap;
    return largest_below(config, bytes, largest_cap);
  }
  return largest_below(config, bytes, bytes / uncapped_bytes + 1);
}

}  // namespace

std::int64_t kv_blocks_per_group(const KvCacheConfig& config) {
  if (config.n_blocks > 0) return config.n_blocks;
  std::int64_t set_bytes = 0;  // one block of every group; each < 2^40, so no overflow
  for (std::size_t g = 0; g < config.groups.size(); ++g) {
    set_bytes += kv_group_layout(config, g).block_bytes();
  }
  const std::int64_t tail_bytes = kv_exact_tail_bytes(config);
  const std::int64_t n =
      largest_n_within(config, std::max<std::int64_t>(0, config.budget_bytes - tail_bytes));
  if (n < 1 && tail_bytes > 0) {
    throw_error<CapacityError>(
        "KV cache: budget of {} bytes holds no block after the {} bytes of the exact tail's fp16 "
        "copies (one block of each of the {} layer groups takes {} bytes)",
        config.budget_bytes, tail_bytes, config.groups.size(), set_bytes);
  }
  if (n < 1) {
    throw_error<CapacityError>(
        "KV cache: budget of {} bytes holds no block (one block of each of the {} layer groups "
        "takes {} bytes)",
        config.budget_bytes, config.groups.size(), set_bytes);
  }
  return n;
}

}  // namespace kvscope
