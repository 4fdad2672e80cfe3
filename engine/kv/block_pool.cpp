#include "kv/block_pool.h"

#include <limits>

#include "util/error.h"

namespace kvscope {
namespace {

std::int64_t checked_block_count(std::int64_t n_blocks) {
  constexpr std::int64_t kMax = std::numeric_limits<BlockId>::max();
  if (n_blocks < 0 || n_blocks > kMax) {
    throw_error<UsageError>("block pool: {} blocks out of range [0, {}]", n_blocks, kMax);
  }
  return n_blocks;
}

}  // namespace

BlockPool::BlockPool(std::int64_t n_blocks)
    : refcounts_(static_cast<std::size_t>(checked_block_count(n_blocks)), 0), free_(n_blocks) {}

BlockId BlockPool::allocate() {
  if (free_.empty()) {
    throw_error<CapacityError>("block pool: no free block (all {} blocks in use)", n_blocks());
  }
  const BlockId id = free_.pop_front();
  refcounts_[static_cast<std::size_t>(id)] = 1;
  return id;
}

void BlockPool::add_ref(BlockId id) {
  check_used(id, "add_ref");
  ++refcounts_[static_cast<std::size_t>(id)];
}

bool BlockPool::release(BlockId id) {
  check_used(id, "release");
  if (--refcounts_[static_cast<std::size_t>(id)] > 0) return false;
  free_.push_back(id);
  return true;
}

std::int32_t BlockPool::refcount(BlockId id) const {
  if (id < 0 || id >= n_blocks()) {
    throw_error<UsageError>("block pool: block id {} out of range [0, {})", id, n_blocks());
  }
  return refcounts_[static_cast<std::size_t>(id)];
}

void BlockPool::check_used(BlockId id, const char* operation) const {
  if (refcount(id) == 0) {
    throw_error<UsageError>("block pool: {} of block {}, which is free", operation, id);
  }
}

}  // namespace kvscope
