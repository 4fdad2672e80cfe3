#include "kv/sliding_window.h"

#include <algorithm>

#include "kv/block_pool.h"
#include "kv/block_table.h"

namespace kvscope {

std::int64_t SlidingWindow::first_visible_position(std::int64_t query_pos) const {
  return window_ > 0 ? std::max<std::int64_t>(0, query_pos - window_ + 1) : 0;
}

// Queries start at n_tokens(): logical blocks before the one holding their first visible
// key are dropped.
std::int64_t SlidingWindow::blocks_to_drop(const BlockTable& t) const {
  if (window_ == 0) return 0;
  const std::int64_t first_needed = first_visible_position(t.n_tokens()) / t.block_size();
  return std::max<std::int64_t>(0, first_needed - t.first_held());
}

std::int64_t SlidingWindow::blocks_freed(const BlockTable& t, const BlockPool& pool) const {
  const std::int64_t drop = blocks_to_drop(t);
  std::int64_t freed = 0;
  for (std::int64_t i = t.first_held(); i < t.first_held() + drop; ++i) {
    freed += pool.refcount(t.block(i)) == 1;
  }
  return freed;
}

bool SlidingWindow::holds_window_after_truncate(const BlockTable& t, std::int64_t n) const {
  return n <= 0 || t.first_held() <= first_visible_position(n) / t.block_size();
}

}  // namespace kvscope
