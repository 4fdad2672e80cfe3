// The sliding-window rule of one layer group (window 0: full attention, the rule then
// keeps everything): a query at position q sees the keys at q - window + 1 .. q, so a
// sequence's leading blocks that end before that are no longer needed and can be
// released (KvCacheManager::grow does), and a sequence cut to n tokens must still hold
// the block of position n - window + 1.
#pragma once

#include <cstdint>

namespace kvscope {

class BlockPool;
class BlockTable;

class SlidingWindow {
 public:
  explicit SlidingWindow(std::int64_t window = 0) : window_(window) {}

  std::int64_t window() const { return window_; }
  // The oldest key position a query at query_pos sees (0 for full attention).
  std::int64_t first_visible_position(std::int64_t query_pos) const;
  // The leading blocks of `t` still held that no query from t.n_tokens() on will see.
  std::int64_t blocks_to_drop(const BlockTable& t) const;
  // Of those, the ones no other sequence holds: dropping them returns them to `pool`.
  std::int64_t blocks_freed(const BlockTable& t, const BlockPool& pool) const;
  // Whether `t` cut to n tokens still holds every block the next query (at n) sees.
  bool holds_window_after_truncate(const BlockTable& t, std::int64_t n) const;

 private:
  std::int64_t window_;
};

}  // namespace kvscope
