// The free blocks of one BlockPool as a FIFO queue threaded through an array of links, so
// allocate (pop_front) and free (push_back) are O(1) and never allocate memory. Freed
// blocks go to the back: a block is reused as late as possible, which keeps recently
// freed bytes intact for debugging and spreads wear over the pool as vLLM's queue does.
// This class is the only code that touches the links.
#pragma once

#include <cstdint>
#include <vector>

#include "kv/kv_ids.h"

namespace kvscope {

class FreeBlockQueue {
 public:
  // A queue holding every block 0 .. n_blocks - 1, in id order.
  explicit FreeBlockQueue(std::int64_t n_blocks);

  std::int64_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  bool contains(BlockId id) const { return queued_[static_cast<std::size_t>(id)] != 0; }

  // Removes and returns the front block. Throws std::logic_error when empty.
  BlockId pop_front();
  // Appends a block. Throws std::logic_error if it is already queued.
  void push_back(BlockId id);

  // The queue front to back (O(n), for checks, tests and snapshots).
  std::vector<BlockId> to_vector() const;

 private:
  std::vector<BlockId> next_;         // [n_blocks] block after this one, kNoBlock at the tail
  std::vector<std::uint8_t> queued_;  // [n_blocks] 1 while the block is in the queue
  BlockId head_ = kNoBlock;
  BlockId tail_ = kNoBlock;
  std::int64_t size_ = 0;
};

}  // namespace kvscope
