#include "kv/free_block_queue.h"

#include <stdexcept>
#include <string>

namespace kvscope {

FreeBlockQueue::FreeBlockQueue(std::int64_t n_blocks)
    : next_(static_cast<std::size_t>(n_blocks)), queued_(static_cast<std::size_t>(n_blocks), 1) {
  for (std::int64_t i = 0; i < n_blocks; ++i) {
    next_[static_cast<std::size_t>(i)] = i + 1 < n_blocks ? static_cast<BlockId>(i + 1) : kNoBlock;
  }
  size_ = n_blocks;
  if (n_blocks > 0) {
    head_ = 0;
    tail_ = static_cast<BlockId>(n_blocks - 1);
  }
}

BlockId FreeBlockQueue::pop_front() {
  if (head_ == kNoBlock) throw std::logic_error("FreeBlockQueue::pop_front on an empty queue");
  const BlockId id = head_;
  const auto i = static_cast<std::size_t>(id);
  head_ = next_[i];
  if (head_ == kNoBlock) tail_ = kNoBlock;
  next_[i] = kNoBlock;
  queued_[i] = 0;
  --size_;
  return id;
}

void FreeBlockQueue::push_back(BlockId id) {
  const auto i = static_cast<std::size_t>(id);
  if (queued_[i]) {
    throw std::logic_error("FreeBlockQueue::push_back: block " + std::to_string(id) +
                           " is already free");
  }
  queued_[i] = 1;
  next_[i] = kNoBlock;
  if (tail_ == kNoBlock) {
    head_ = id;
  } else {
    next_[static_cast<std::size_t>(tail_)] = id;
  }
  tail_ = id;
  ++size_;
}

std::vector<BlockId> FreeBlockQueue::to_vector() const {
  std::vector<BlockId> out;
  out.reserve(static_cast<std::size_t>(size_));
  for (BlockId id = head_; id != kNoBlock; id = next_[static_cast<std::size_t>(id)]) {
    out.push_back(id);
  }
  return out;
}

}  // namespace kvscope
