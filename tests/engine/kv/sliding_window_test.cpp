#include "kv/sliding_window.h"

#include <vector>

#include <gtest/gtest.h>

#include "kv/block_pool.h"
#include "kv/block_table.h"

namespace kvscope {
namespace {

// A table of `tokens` tokens in blocks of 4, its blocks taken from `pool` in order.
BlockTable table_of(BlockPool& pool, std::int64_t tokens) {
  BlockTable t(4);
  std::vector<BlockId> ids(static_cast<std::size_t>(t.blocks_to_append(tokens)));
  for (BlockId& id : ids) id = pool.allocate();
  t.append(ids, tokens);
  return t;
}

TEST(SlidingWindow, FullAttentionSeesEveryPositionAndDropsNothing) {
  const SlidingWindow full;
  BlockPool pool(8);
  const BlockTable t = table_of(pool, 30);
  EXPECT_EQ(full.first_visible_position(1000), 0);
  EXPECT_EQ(full.blocks_to_drop(t), 0);
  EXPECT_TRUE(full.holds_window_after_truncate(t, 17));
}

TEST(SlidingWindow, AQuerySeesTheLastWindowPositionsIncludingItself) {
  const SlidingWindow w(8);
  EXPECT_EQ(w.first_visible_position(0), 0);
  EXPECT_EQ(w.first_visible_position(7), 0);
  EXPECT_EQ(w.first_visible_position(8), 1);
  EXPECT_EQ(w.first_visible_position(20), 13);
}

TEST(SlidingWindow, DropsTheLeadingBlocksBeforeTheNextQuerysFirstVisibleKey) {
  const SlidingWindow w(6);
  BlockPool pool(8);
  BlockTable t = table_of(pool, 14);  // next query at 14 sees 9..14: block 2 on
  EXPECT_EQ(w.blocks_to_drop(t), 2);
  pool.release(t.drop_front());
  EXPECT_EQ(w.blocks_to_drop(t), 1);                 // counted from the first block still held
  const BlockTable short_table = table_of(pool, 5);  // sees 0..5
  EXPECT_EQ(w.blocks_to_drop(short_table), 0);
}

TEST(SlidingWindow, FreesOnlyTheDroppedBlocksNoOtherSequenceHolds) {
  const SlidingWindow w(6);
  BlockPool pool(8);
  const BlockTable t = table_of(pool, 14);
  pool.add_ref(t.block(0));  // a fork still holds block 0
  EXPECT_EQ(w.blocks_to_drop(t), 2);
  EXPECT_EQ(w.blocks_freed(t, pool), 1);
}

TEST(SlidingWindow, ATruncatedTableMustStillHoldWhatTheNextQuerySees) {
  const SlidingWindow w(6);
  BlockPool pool(8);
  BlockTable t = table_of(pool, 14);
  pool.release(t.drop_front());  // logical block 0 released
  EXPECT_TRUE(w.holds_window_after_truncate(t, 14));
  EXPECT_TRUE(w.holds_window_after_truncate(t, 9));   // sees 4..9: block 1 on
  EXPECT_FALSE(w.holds_window_after_truncate(t, 8));  // sees 3..8: block 0 is gone
  EXPECT_TRUE(w.holds_window_after_truncate(t, 0));   // nothing left to see
}

}  // namespace
}  // namespace kvscope
