#include "kv/block_pool.h"

#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kv/free_block_queue.h"
#include "util/error.h"

namespace kvscope {
namespace {

TEST(FreeBlockQueue, StartsWithEveryBlockInIdOrderAndIsFifo) {
  FreeBlockQueue q(4);
  EXPECT_EQ(q.size(), 4);
  EXPECT_EQ(q.to_vector(), (std::vector<BlockId>{0, 1, 2, 3}));
  EXPECT_EQ(q.pop_front(), 0);
  EXPECT_EQ(q.pop_front(), 1);
  EXPECT_FALSE(q.contains(0));
  q.push_back(0);
  EXPECT_TRUE(q.contains(0));
  EXPECT_EQ(q.to_vector(), (std::vector<BlockId>{2, 3, 0}));
  EXPECT_EQ(q.pop_front(), 2);
  EXPECT_EQ(q.pop_front(), 3);
  EXPECT_EQ(q.pop_front(), 0);
  EXPECT_TRUE(q.empty());
  q.push_back(1);  // into an emptied queue
  EXPECT_EQ(q.to_vector(), (std::vector<BlockId>{1}));
}

TEST(FreeBlockQueue, PopFromEmptyAndDoublePushAreLogicErrors) {
  FreeBlockQueue q(1);
  EXPECT_THROW(q.push_back(0), std::logic_error);
  q.pop_front();
  EXPECT_THROW(q.pop_front(), std::logic_error);
  FreeBlockQueue none(0);
  EXPECT_TRUE(none.empty());
  EXPECT_THROW(none.pop_front(), std::logic_error);
}

TEST(BlockPool, AllocateGivesRefcountOneAndReleaseReturnsTheBlockToTheBack) {
  BlockPool pool(3);
  const BlockId a = pool.allocate();
  const BlockId b = pool.allocate();
  EXPECT_EQ(a, 0);
  EXPECT_EQ(b, 1);
  EXPECT_EQ(pool.refcount(a), 1);
  EXPECT_EQ(pool.n_used(), 2);
  EXPECT_EQ(pool.n_free(), 1);
  EXPECT_TRUE(pool.release(a));
  EXPECT_TRUE(pool.is_free(a));
  EXPECT_EQ(pool.free_queue().to_vector(), (std::vector<BlockId>{2, 0}));
  EXPECT_EQ(pool.allocate(), 2);
  EXPECT_EQ(pool.allocate(), 0);
}

TEST(BlockPool, SharedBlockIsFreedOnlyByItsLastRelease) {
  BlockPool pool(2);
  const BlockId a = pool.allocate();
  pool.add_ref(a);
  pool.add_ref(a);
  EXPECT_EQ(pool.refcount(a), 3);
  EXPECT_FALSE(pool.release(a));
  EXPECT_FALSE(pool.release(a));
  EXPECT_EQ(pool.n_used(), 1);
  EXPECT_TRUE(pool.release(a));
  EXPECT_EQ(pool.n_used(), 0);
}

TEST(BlockPool, ExhaustionIsACapacityErrorNamingTheBlockCount) {
  BlockPool pool(2);
  pool.allocate();
  pool.allocate();
  try {
    pool.allocate();
    FAIL() << "expected CapacityError";
  } catch (const CapacityError& e) {
    EXPECT_NE(std::string(e.what()).find("all 2 blocks in use"), std::string::npos) << e.what();
  }
}

TEST(BlockPool, MisuseOfFreeOrUnknownBlocksIsAUsageError) {
  BlockPool pool(2);
  EXPECT_THROW(pool.release(0), UsageError);  // free
  EXPECT_THROW(pool.add_ref(1), UsageError);  // free
  EXPECT_THROW(pool.refcount(2), UsageError);
  EXPECT_THROW(pool.refcount(-1), UsageError);
  EXPECT_THROW(BlockPool(-1), UsageError);
  EXPECT_THROW(BlockPool(std::int64_t{1} << 32), UsageError);
}

}  // namespace
}  // namespace kvscope
