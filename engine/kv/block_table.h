// One sequence's blocks in one layer group: logical block i holds token positions
// [i * block_size, (i + 1) * block_size) in physical block blocks()[i]. The table only
// grows at the end; the exceptions are a sliding window dropping blocks at the front
// (their entries become kNoBlock, so positions keep their index) and copy-on-write
// replacing the tail block, and truncation (a sequence starting from another's prefix).
//
// Invariant: n_blocks() == ceil(n_tokens() / block_size), i.e. capacity covers the tokens
// and no block is held beyond the last token. The table holds ids only; the pool holds the
// refcounts, and KvCacheManager keeps the two consistent.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "kv/kv_ids.h"

namespace kvscope {

class BlockTable {
 public:
  explicit BlockTable(std::int64_t block_size);

  std::int64_t block_size() const { return block_size_; }
  std::int64_t n_tokens() const { return n_tokens_; }
  std::int64_t n_blocks() const { return static_cast<std::int64_t>(blocks_.size()); }
  std::int64_t capacity() const { return n_blocks() * block_size_; }
  // Logical index of the oldest block still held (0 unless a window dropped some).
  std::int64_t first_held() const { return first_held_; }
  std::int64_t n_held() const { return n_blocks() - first_held_; }

  // [n_blocks] physical ids, kNoBlock where a window dropped the block.
  std::span<const BlockId> blocks() const { return blocks_; }
  BlockId block(std::int64_t logical) const { return blocks_[static_cast<std::size_t>(logical)]; }
  BlockId tail() const { return blocks_.empty() ? kNoBlock : blocks_.back(); }
  // Tokens written or reserved in a logical block: block_size except in the tail.
  std::int64_t filled(std::int64_t logical) const;

  // Blocks that growing by n tokens needs appended: ceil((n_tokens + n) / bs) - n_blocks.
  std::int64_t blocks_to_append(std::int64_t n) const;

  // Appends blocks, then counts n more tokens. The caller appends exactly
  // blocks_to_append(n) ids (std::logic_error otherwise).
  void append(std::span<const BlockId> new_blocks, std::int64_t n);
  // Copy-on-write: the tail block is now `id`.
  void replace_tail(BlockId id);
  // Sliding window: stops holding the oldest held block and returns its id.
  BlockId drop_front();
  // Keeps the first n tokens (n <= n_tokens(), and no block a window dropped may be
  // needed: n must leave at least one held block or none at all) and returns the ids of
  // the blocks past them, which it no longer holds.
  std::vector<BlockId> truncate(std::int64_t n);
  // Empties the table (free / preempt) and returns the ids it held.
  std::vector<BlockId> clear();

 private:
  std::int64_t block_size_;
  std::int64_t n_tokens_ = 0;
  std::int64_t first_held_ = 0;
  std::vector<BlockId> blocks_;
};

}  // namespace kvscope
