#include "kv/exact_tail.h"

#include <algorithm>

#include "util/error.h"

namespace kvscope {

ExactTail::ExactTail(std::int64_t n_pool_blocks, std::int64_t n_shadows, std::int64_t tail_blocks,
                     const KvBlockLayout& layout, bool host_bytes)
    : tail_blocks_(tail_blocks),
      n_shadows_(n_shadows),
      layout_(KvBlockLayout::make(KvDtype::F16, KvDtype::F16, layout.n_layers, layout.n_kv_heads,
                                  layout.head_dim, layout.block_size)),
      shadow_of_(static_cast<std::size_t>(n_pool_blocks), -1) {
  if (tail_blocks < 1 || n_shadows < 1) {
    throw_error<UsageError>("exact tail: {} blocks with {} shadows (both must be >= 1)",
                            tail_blocks, n_shadows);
  }
  if (host_bytes) storage_.emplace(n_shadows, layout_.block_bytes());
  free_.resize(static_cast<std::size_t>(n_shadows));
  // popped from the back: shadow 0 first, so a short run touches the first pages only
  for (std::int64_t i = 0; i < n_shadows; ++i) {
    free_[static_cast<std::size_t>(i)] = static_cast<std::int32_t>(n_shadows - 1 - i);
  }
}

std::int32_t ExactTail::shadow_index(BlockId block) const {
  if (block < 0 || block >= static_cast<BlockId>(shadow_of_.size())) {
    throw_error<UsageError>("exact tail: block {} outside the pool of {}", block,
                            shadow_of_.size());
  }
  return shadow_of_[static_cast<std::size_t>(block)];
}

std::int32_t& ExactTail::shadow_slot(BlockId block) {
  (void)shadow_index(block);  // range check
  return shadow_of_[static_cast<std::size_t>(block)];
}

const std::uint8_t* ExactTail::shadow(BlockId block) const {
  const std::int32_t s = shadow_index(block);
  return s < 0 || !storage_ ? nullptr : storage_->block(s);
}

std::uint8_t* ExactTail::shadow(BlockId block) {
  const std::int32_t s = shadow_index(block);
  return s < 0 || !storage_ ? nullptr : storage_->block(s);
}

void ExactTail::attach(BlockId block) {
  std::int32_t& s = shadow_slot(block);
  if (s >= 0 || free_.empty()) return;
  s = free_.back();
  free_.pop_back();
}

void ExactTail::detach(BlockId block) {
  std::int32_t& s = shadow_slot(block);
  if (s < 0) return;
  free_.push_back(s);
  s = -1;
}

void ExactTail::copy(BlockId src, BlockId dst) {
  const std::int32_t from = shadow_index(src);
  if (from < 0) return;
  attach(dst);
  const std::int32_t to = shadow_index(dst);
  if (to >= 0 && storage_) storage_->copy_block(from, to);
}

void ExactTail::trim(const BlockTable& table, std::int64_t next_pos) {
  // a query at next_pos reads blocks [next_pos / block_size - tail_blocks + 1, ...] exactly
  const std::int64_t keep_from = next_pos / layout_.block_size - tail_blocks_ + 1;
  const std::int64_t end = std::min(keep_from, table.n_blocks());
  for (std::int64_t b = table.first_held(); b < end; ++b) {
    const BlockId id = table.block(b);
    if (id != kNoBlock) detach(id);
  }
}

}  // namespace kvscope
