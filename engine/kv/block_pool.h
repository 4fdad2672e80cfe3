// Bookkeeping of one layer group's physical blocks: a refcount per block and the queue of
// free blocks. It owns no KV bytes (KvStorage does, on the host; a device backend owns
// device bytes with the same layout), so the same pool drives CPU and GPU caches.
//
// A block is free exactly when its refcount is 0, and then it is in the free queue.
// allocate / add_ref / release are O(1).
#pragma once

#include <cstdint>
#include <vector>

#include "kv/free_block_queue.h"
#include "kv/kv_ids.h"

namespace kvscope {

class BlockPool {
 public:
  // n_blocks in [0, 2^31 - 1]; UsageError otherwise.
  explicit BlockPool(std::int64_t n_blocks);

  std::int64_t n_blocks() const { return static_cast<std::int64_t>(refcounts_.size()); }
  std::int64_t n_free() const { return free_.size(); }
  std::int64_t n_used() const { return n_blocks() - n_free(); }

  // Takes the front free block and gives it refcount 1. CapacityError when none is free.
  BlockId allocate();
  // One more holder of a used block (fork). UsageError if the block is free or unknown.
  void add_ref(BlockId id);
  // One holder fewer; the block returns to the free queue at refcount 0. Returns whether
  // it did. UsageError if the block is already free or unknown.
  bool release(BlockId id);

  std::int32_t refcount(BlockId id) const;
  bool is_free(BlockId id) const { return refcount(id) == 0; }
  const FreeBlockQueue& free_queue() const { return free_; }

 private:
  void check_used(BlockId id, const char* operation) const;

  std::vector<std::int32_t> refcounts_;  // [n_blocks]
  FreeBlockQueue free_;
};

}  // namespace kvscope
