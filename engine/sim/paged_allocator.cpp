#include "sim/paged_allocator.h"

#include <algorithm>

namespace kvscope {
namespace {

// Only the bookkeeping matters here; the KV shape just has to be valid.
KvCacheConfig paged_config(const SimConfig& c) {
  KvCacheConfig k;
  k.groups = uniform_layer_groups(1, KvDtype::F16);
  k.n_kv_heads = 1;
  k.head_dim = 1;
  k.block_size = c.block_size;
  k.max_context = c.max_context;
  k.n_blocks = sim_paged_blocks(c);
  k.host_storage = false;
  return k;
}

}  // namespace

PagedAllocator::PagedAllocator(const SimConfig& config)
    : capacity_(config.capacity), block_size_(config.block_size), kv_(paged_config(config)) {}

bool PagedAllocator::admit(const SimRequest& r, std::int64_t stored) {
  const bool known = kv_.has_sequence(r.id);
  if (!known) kv_.add_sequence(r.id);
  if (!kv_.can_grow(r.id, stored)) {
    if (!known) kv_.free_sequence(r.id);
    return false;
  }
  if (kv_.is_preempted(r.id)) kv_.resume(r.id);
  kv_.grow(r.id, stored);
  return true;
}

bool PagedAllocator::can_grow(std::int64_t id) const {
  return kv_.can_grow(id, 1);
}

void PagedAllocator::grow(std::int64_t id) {
  kv_.grow(id, 1);
}

void PagedAllocator::preempt(std::int64_t id) {
  kv_.preempt(id);
}

void PagedAllocator::release(std::int64_t id) {
  kv_.free_sequence(id);
}

SimMemory PagedAllocator::memory() const {
  SimMemory m;
  for (const SeqId id : kv_.sequence_ids()) m.stored += kv_.n_tokens(id);  // 0 if preempted
  m.internal = kv_.usage().n_used * block_size_ - m.stored;
  return m;
}

std::int64_t PagedAllocator::admission_need(const SimRequest&, std::int64_t stored) const {
  return (stored + block_size_ - 1) / block_size_ * block_size_;
}

std::int64_t PagedAllocator::external(std::int64_t) const {
  return capacity_ - kv_.usage().n_blocks * block_size_;
}

SimBlockMap PagedAllocator::block_map(std::int64_t head_need) const {
  SimBlockMap map;
  map.capacity = capacity_;
  map.usable = kv_.usage().n_blocks * block_size_;
  map.unit = block_size_;
  map.paged = true;
  map.head_need = head_need;
  for (const SeqId id : kv_.sequence_ids()) {
    if (kv_.is_preempted(id)) continue;
    const BlockTable& t = kv_.block_table(id, 0);
    for (std::int64_t i = 0; i < t.n_blocks(); ++i) {
      const std::int64_t filled = t.filled(i);
      map.spans.push_back(
          {std::int64_t{t.block(i)} * block_size_, block_size_, id, filled, filled});
    }
  }
  std::sort(map.spans.begin(), map.spans.end(),
            [](const SimSpan& a, const SimSpan& b) { return a.start < b.start; });
  return map;
}

}  // namespace kvscope
