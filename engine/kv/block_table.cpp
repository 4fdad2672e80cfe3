#include "kv/block_table.h"

#include <algorithm>
#include <stdexcept>

#include "util/error.h"

namespace kvscope {

BlockTable::BlockTable(std::int64_t block_size) : block_size_(block_size) {
  if (block_size < 1) throw_error<UsageError>("block table: block_size {} < 1", block_size);
}

std::int64_t BlockTable::filled(std::int64_t logical) const {
  return std::clamp(n_tokens_ - logical * block_size_, std::int64_t{0}, block_size_);
}

std::int64_t BlockTable::blocks_to_append(std::int64_t n) const {
  return (n_tokens_ + n + block_size_ - 1) / block_size_ - n_blocks();
}

void BlockTable::append(std::span<const BlockId> new_blocks, std::int64_t n) {
  if (n < 0 || static_cast<std::int64_t>(new_blocks.size()) != blocks_to_append(n)) {
    throw std::logic_error("BlockTable::append: block count does not match the tokens");
  }
  blocks_.insert(blocks_.end(), new_blocks.begin(), new_blocks.end());
  n_tokens_ += n;
}

void BlockTable::replace_tail(BlockId id) {
  if (n_held() == 0) throw std::logic_error("BlockTable::replace_tail on a table with no block");
  blocks_.back() = id;
}

BlockId BlockTable::drop_front() {
  if (n_held() == 0) throw std::logic_error("BlockTable::drop_front on a table with no block");
  const BlockId id = blocks_[static_cast<std::size_t>(first_held_)];
  blocks_[static_cast<std::size_t>(first_held_)] = kNoBlock;
  ++first_held_;
  return id;
}

std::vector<BlockId> BlockTable::truncate(std::int64_t n) {
  const std::int64_t keep = (n + block_size_ - 1) / block_size_;
  if (n < 0 || n > n_tokens_ || (keep > 0 && keep <= first_held_)) {
    throw std::logic_error("BlockTable::truncate past the tokens or into dropped blocks");
  }
  if (keep == 0) return clear();
  std::vector<BlockId> dropped(blocks_.begin() + keep, blocks_.end());
  blocks_.resize(static_cast<std::size_t>(keep));
  n_tokens_ = n;
  return dropped;
}

std::vector<BlockId> BlockTable::clear() {
  std::vector<BlockId> held(blocks_.begin() + first_held_, blocks_.end());
  blocks_.clear();
  n_tokens_ = 0;
  first_held_ = 0;
  return held;
}

}  // namespace kvscope
