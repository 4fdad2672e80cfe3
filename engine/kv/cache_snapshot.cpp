#include "kv/cache_snapshot.h"

namespace kvscope {
namespace {

double fragmentation(std::int64_t allocated, std::int64_t filled) {
  return allocated > 0 ? static_cast<double>(allocated - filled) / static_cast<double>(allocated)
                       : 0.0;
}

}  // namespace

void summarize_group(LayerGroupSnapshot& group, std::int64_t block_size) {
  group.n_blocks = static_cast<std::int64_t>(group.blocks.size());
  group.n_used = group.n_shared = group.filled_slots = group.shared_savings_bytes = 0;
  group.exact_copies_used = 0;
  for (const BlockInfo& b : group.blocks) {
    if (b.is_free()) continue;
    ++group.n_used;
    if (b.exact_copy) ++group.exact_copies_used;
    group.filled_slots += b.filled_slots;
    if (b.is_shared()) {
      ++group.n_shared;
      group.shared_savings_bytes += (b.refcount - 1) * group.block_bytes;
    }
  }
  group.n_free = group.n_blocks - group.n_used;
  group.allocated_slots = group.n_used * block_size;
  group.internal_fragmentation = fragmentation(group.allocated_slots, group.filled_slots);
}

void summarize_totals(CacheSnapshot& s) {
  s.n_blocks = s.n_used = s.n_free = s.n_shared = s.pool_bytes = s.used_bytes = 0;
  s.allocated_slots = s.filled_slots = s.shared_savings_bytes = 0;
  s.exact_copies = s.exact_copies_used = 0;
  s.contiguous = {};
  for (const LayerGroupSnapshot& g : s.groups) {
    s.n_blocks += g.n_blocks;
    s.n_used += g.n_used;
    s.n_free += g.n_free;
    s.n_shared += g.n_shared;
    s.pool_bytes += g.n_blocks * g.block_bytes + g.exact_copies * g.exact_copy_bytes;
    s.used_bytes += g.n_used * g.block_bytes + g.exact_copies_used * g.exact_copy_bytes;
    s.exact_copies += g.exact_copies;
    s.exact_copies_used += g.exact_copies_used;
    s.allocated_slots += g.allocated_slots;
    s.filled_slots += g.filled_slots;
    s.shared_savings_bytes += g.shared_savings_bytes;
    s.contiguous += g.contiguous;
  }
  s.internal_fragmentation = fragmentation(s.allocated_slots, s.filled_slots);
}

}  // namespace kvscope
