#include "kv/contiguous_policy.h"

#include <algorithm>
#include <utility>

#include "util/error.h"

namespace kvscope {

ContiguousCost& ContiguousCost::operator+=(const ContiguousCost& o) {
  reserved_slots += o.reserved_slots;
  used_slots += o.used_slots;
  wasted_slots += o.wasted_slots;
  reserved_bytes += o.reserved_bytes;
  used_bytes += o.used_bytes;
  wasted_bytes += o.wasted_bytes;
  return *this;
}

ContiguousPolicy::ContiguousPolicy(std::int64_t max_context,
                                   std::vector<ContiguousGroupSpec> groups)
    : max_context_(max_context), groups_(std::move(groups)) {
  if (max_context < 1)
    throw_error<UsageError>("contiguous policy: max_context {} < 1", max_context);
  for (std::size_t g = 0; g < groups_.size(); ++g) {
    const ContiguousGroupSpec& s = groups_[g];
    if (s.window < 0 || s.bytes_per_token < 1 || s.bytes_per_block < 0 || s.block_size < 1) {
      throw_error<UsageError>(
          "contiguous policy: group {} has window {}, {} bytes per token and {} bytes per block "
          "of {} tokens",
          g, s.window, s.bytes_per_token, s.bytes_per_block, s.block_size);
    }
  }
}

ContiguousPolicy ContiguousPolicy::for_config(const KvCacheConfig& config) {
  std::vector<ContiguousGroupSpec> specs;
  for (const LayerGroupConfig& g : config.groups) {
    const auto n_layers = static_cast<std::int64_t>(g.layers.size());
    const std::int64_t per_slot =
        kv_slot_bytes_per_layer(g.k_dtype, g.v_dtype, config.n_kv_heads, config.head_dim);
    const std::int64_t per_block =
        kv_block_offset_bytes_per_layer(g.k_dtype, config.n_kv_heads, config.head_dim);
    specs.push_back({g.window, per_slot * n_layers, per_block * n_layers, config.block_size});
  }
  return ContiguousPolicy(config.max_context, std::move(specs));
}

std::int64_t ContiguousPolicy::slots_per_sequence(std::size_t group) const {
  const std::int64_t window = groups_.at(group).window;
  return window > 0 ? std::min(window, max_context_) : max_context_;
}

std::int64_t ContiguousPolicy::bytes_per_sequence() const {
  std::int64_t bytes = 0;
  for (std::size_t g = 0; g < groups_.size(); ++g) bytes += group_bytes(g, slots_per_sequence(g));
  return bytes;
}

std::int64_t ContiguousPolicy::group_bytes(std::size_t group, std::int64_t slots) const {
  const ContiguousGroupSpec& s = groups_.at(group);
  return slots * s.bytes_per_token + (slots + s.block_size - 1) / s.block_size * s.bytes_per_block;
}

ContiguousCost ContiguousPolicy::group_cost(std::size_t group,
                                            std::span<const std::int64_t> seq_lengths) const {
  const std::int64_t per_seq = slots_per_sequence(group);
  ContiguousCost c;
  for (const std::int64_t length : seq_lengths) {
    const std::int64_t used = std::clamp(length, std::int64_t{0}, per_seq);
    c.reserved_slots += per_seq;
    c.used_slots += used;
    c.reserved_bytes += group_bytes(group, per_seq);
    c.used_bytes += group_bytes(group, used);
  }
  c.wasted_slots = c.reserved_slots - c.used_slots;
  c.wasted_bytes = c.reserved_bytes - c.used_bytes;
  return c;
}

ContiguousCost ContiguousPolicy::cost(std::span<const std::int64_t> seq_lengths) const {
  ContiguousCost total;
  for (std::size_t g = 0; g < groups_.size(); ++g) total += group_cost(g, seq_lengths);
  return total;
}

std::int64_t ContiguousPolicy::max_sequences(std::int64_t budget_bytes) const {
  const std::int64_t per_seq = bytes_per_sequence();
  return per_seq > 0 && budget_bytes > 0 ? budget_bytes / per_seq : 0;
}

}  // namespace kvscope
