#include "kv/block_table.h"

#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

#include "util/error.h"

namespace kvscope {
namespace {

TEST(BlockTable, AppendsBlocksAsTokensCrossBlockBoundaries) {
  BlockTable t(4);
  EXPECT_EQ(t.blocks_to_append(1), 1);
  EXPECT_EQ(t.blocks_to_append(4), 1);
  EXPECT_EQ(t.blocks_to_append(5), 2);
  const std::vector<BlockId> first = {7, 3};
  t.append(first, 6);
  EXPECT_EQ(t.n_tokens(), 6);
  EXPECT_EQ(t.capacity(), 8);
  EXPECT_EQ(t.filled(0), 4);
  EXPECT_EQ(t.filled(1), 2);
  EXPECT_EQ(t.tail(), 3);
  EXPECT_EQ(t.blocks_to_append(2), 0);  // fits in the tail
  t.append({}, 2);
  EXPECT_EQ(t.blocks_to_append(1), 1);
  const std::vector<BlockId> next = {9};
  t.append(next, 1);
  EXPECT_EQ(t.blocks().size(), 3u);
  EXPECT_EQ(t.block(2), 9);
  EXPECT_EQ(t.filled(2), 1);
}

TEST(BlockTable, AppendWithTheWrongBlockCountIsALogicError) {
  BlockTable t(4);
  const std::vector<BlockId> two = {1, 2};
  EXPECT_THROW(t.append(two, 3), std::logic_error);
  EXPECT_THROW(t.append({}, 1), std::logic_error);
  EXPECT_EQ(t.n_tokens(), 0);
}

TEST(BlockTable, DropFrontKeepsPositionsAndClearReturnsOnlyHeldBlocks) {
  BlockTable t(2);
  const std::vector<BlockId> ids = {5, 6, 7};
  t.append(ids, 5);
  EXPECT_EQ(t.drop_front(), 5);
  EXPECT_EQ(t.first_held(), 1);
  EXPECT_EQ(t.n_held(), 2);
  EXPECT_EQ(t.block(0), kNoBlock);
  EXPECT_EQ(t.block(2), 7);  // position 4 still lives in logical block 2
  t.replace_tail(8);
  EXPECT_EQ(t.tail(), 8);
  EXPECT_EQ(t.clear(), (std::vector<BlockId>{6, 8}));
  EXPECT_EQ(t.n_tokens(), 0);
  EXPECT_EQ(t.n_blocks(), 0);
  EXPECT_EQ(t.first_held(), 0);
  EXPECT_THROW(t.drop_front(), std::logic_error);
  EXPECT_THROW(t.replace_tail(1), std::logic_error);
}

TEST(BlockTable, BlockSizeBelowOneIsAUsageError) {
  EXPECT_THROW(BlockTable(0), UsageError);
}

TEST(BlockTable, TruncateKeepsTheBlocksOfTheFirstTokensAndReturnsTheRest) {
  BlockTable t(4);
  const std::vector<BlockId> ids = {5, 6, 7};
  t.append(ids, 10);
  EXPECT_EQ(t.truncate(5), (std::vector<BlockId>{7}));
  EXPECT_EQ(t.n_tokens(), 5);
  EXPECT_EQ(t.n_blocks(), 2);
  EXPECT_EQ(t.filled(1), 1);
  EXPECT_EQ(t.truncate(4), (std::vector<BlockId>{6}));  // a block boundary: no partial tail
  EXPECT_EQ(t.truncate(4), std::vector<BlockId>{});
  EXPECT_THROW(t.truncate(5), std::logic_error);
  EXPECT_EQ(t.truncate(0), (std::vector<BlockId>{5}));
  EXPECT_EQ(t.n_blocks(), 0);
}

TEST(BlockTable, TruncateCannotKeepOnlyBlocksAWindowDropped) {
  BlockTable t(4);
  const std::vector<BlockId> ids = {5, 6, 7};
  t.append(ids, 12);
  EXPECT_EQ(t.drop_front(), 5);
  EXPECT_THROW(t.truncate(3), std::logic_error);
  EXPECT_EQ(t.truncate(6), (std::vector<BlockId>{7}));
  EXPECT_EQ(t.first_held(), 1);
}

}  // namespace
}  // namespace kvscope
