// The paged policy, run by the engine's own KvCacheManager (not a re-implementation):
// one layer group, no host storage (bookkeeping only), floor(capacity / block_size)
// blocks, max_context as the context length. A sequence takes blocks as it grows; only
// its tail block has empty slots (internal waste), nothing is reserved ahead, and any
// free block serves any sequence.
#pragma once

#include <cstdint>

#include "kv/kv_cache_manager.h"
#include "sim/sim_allocator.h"

namespace kvscope {

class PagedAllocator final : public SimAllocator {
 public:
  explicit PagedAllocator(const SimConfig& config);

  const KvCacheManager& manager() const { return kv_; }

  // A preempted sequence stays known to the manager (preempt / resume), as the engine's
  // scheduler keeps it; a new one that does not fit is forgotten again.
  bool admit(const SimRequest& r, std::int64_t stored) override;
  bool can_grow(std::int64_t id) const override;
  void grow(std::int64_t id) override;
  void preempt(std::int64_t id) override;
  void release(std::int64_t id) override;

  SimMemory memory() const override;
  std::int64_t admission_need(const SimRequest& r, std::int64_t stored) const override;
  std::int64_t external(std::int64_t need) const override;
  SimBlockMap block_map(std::int64_t head_need) const override;

 private:
  std::int64_t capacity_;
  std::int64_t block_size_;
  KvCacheManager kv_;
};

}  // namespace kvscope
