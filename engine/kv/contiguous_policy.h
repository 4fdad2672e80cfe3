// The reference a paged cache is compared with: a static cache that reserves the whole
// context for every sequence up front (per layer group: max_context slots, or the window
// for a sliding-window group, as a ring buffer would). It answers, for the same live
// sequences the paged cache holds, how many slots and bytes that policy reserves and how
// many of them it leaves empty. It shares nothing between forked sequences.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "kv/kv_cache_config.h"

namespace kvscope {

// A group's bytes in the same element formats as the paged cache: every slot takes
// bytes_per_token, and every run of block_size slots (counted from the start of a
// sequence's reservation) bytes_per_block more, the Int4 K offsets (kv_format.h).
struct ContiguousGroupSpec {
  std::int64_t window = 0;           // 0 = full attention
  std::int64_t bytes_per_token = 0;  // K+V bytes of one token over all layers of the group
  std::int64_t bytes_per_block = 0;  // per block_size slots, over all layers (0: none)
  std::int64_t block_size = 1;
};

// Slots count tokens x groups (a token held in two groups is two slots).
struct ContiguousCost {
  std::int64_t reserved_slots = 0;
  std::int64_t used_slots = 0;
  std::int64_t wasted_slots = 0;  // reserved - used
  std::int64_t reserved_bytes = 0;
  std::int64_t used_bytes = 0;
  std::int64_t wasted_bytes = 0;

  ContiguousCost& operator+=(const ContiguousCost& o);
  // wasted / reserved slots (0 with nothing reserved): what the live panel charts.
  double waste_fraction() const {
    return reserved_slots > 0
               ? static_cast<double>(wasted_slots) / static_cast<double>(reserved_slots)
               : 0.0;
  }
};

class ContiguousPolicy {
 public:
  // UsageError if max_context < 1, a window < 0, bytes_per_token < 1, bytes_per_block < 0
  // or block_size < 1.
  ContiguousPolicy(std::int64_t max_context, std::vector<ContiguousGroupSpec> groups);
  // The policy for the same model, groups and dtypes as a paged cache config.
  static ContiguousPolicy for_config(const KvCacheConfig& config);

  std::int64_t max_context() const { return max_context_; }
  std::size_t n_groups() const { return groups_.size(); }

  // Slots reserved per sequence in a group: max_context, or min(window, max_context).
  std::int64_t slots_per_sequence(std::size_t group) const;
  // Bytes reserved per sequence over all groups.
  std::int64_t bytes_per_sequence() const;
  // Bytes `slots` slots of a sequence take in a group: slots x bytes_per_token +
  // ceil(slots / block_size) x bytes_per_block.
  std::int64_t group_bytes(std::size_t group, std::int64_t slots) const;

  // Cost for live sequences of the given lengths (each clamped to max_context).
  ContiguousCost group_cost(std::size_t group, std::span<const std::int64_t> seq_lengths) const;
  ContiguousCost cost(std::span<const std::int64_t> seq_lengths) const;

  // How many sequences a budget holds under this policy (the side-by-side demo's number).
  std::int64_t max_sequences(std::int64_t budget_bytes) const;

 private:
  std::int64_t max_context_;
  std::vector<ContiguousGroupSpec> groups_;
};

}  // namespace kvscope
