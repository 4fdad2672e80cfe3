// plan_step, the host side of a CUDA step (runs without a GPU): the packed arrays say which
// token is where, and bad chunks are refused before anything reaches the device.
#include <vector>

#include <gtest/gtest.h>

#include "kv/kv_cache_manager.h"
#include "step_plan.h"
#include "util/error.h"

namespace kvscope {
namespace {

KvCacheManager two_sequence_kv(std::int64_t window = 0) {
  KvCacheConfig c;
  c.groups = uniform_layer_groups(2, KvDtype::Int8, window);
  c.n_kv_heads = 2;
  c.head_dim = 8;
  c.block_size = 4;
  c.max_context = 64;
  c.n_blocks = 32;
  c.host_storage = false;
  KvCacheManager kv(c);
  kv.add_sequence(10);
  kv.add_sequence(20);
  kv.grow(10, 6);  // blocks 0, 1
  kv.grow(20, 3);  // block 2
  kv.grow(10, 3);  // block 3 (9 tokens: blocks 0, 1, 3)
  return kv;
}

TEST(CudaStepPlan, PacksTokensPositionsTablesAndLogitRowsPerChunk) {
  const KvCacheManager kv = two_sequence_kv();
  const std::vector<TokenId> a = {7, 8, 9}, b = {5};
  const SequenceChunk chunks[] = {{10, a, 6, true}, {20, b, 2, false}};
  const cuda::StepPlan p = cuda::plan_step(chunks, kv, 100, 64);
  EXPECT_EQ(p.n_tokens, 4);
  EXPECT_EQ(p.n_rows, 4);  // 3 (all_logits) + 1
  auto slice = [&](std::int64_t at, std::int64_t n) {
    return std::vector<int>(p.ints.begin() + at, p.ints.begin() + at + n);
  };
  EXPECT_EQ(slice(p.tokens_at, 4), (std::vector<int>{7, 8, 9, 5}));
  EXPECT_EQ(slice(p.pos_at, 4), (std::vector<int>{6, 7, 8, 2}));
  EXPECT_EQ(slice(p.rows_at, 4), (std::vector<int>{0, 1, 2, 3}));
  ASSERT_EQ(p.first_at.size(), 1u);
  EXPECT_EQ(slice(p.first_at[0], 4), (std::vector<int>{0, 0, 0, 0}));
  EXPECT_EQ(slice(p.table_start_at[0], 4), (std::vector<int>{0, 0, 0, 3}));
  const auto& ta = kv.block_table(10, 0).blocks();
  const auto& tb = kv.block_table(20, 0).blocks();
  std::vector<int> blocks(ta.begin(), ta.end());
  blocks.insert(blocks.end(), tb.begin(), tb.end());
  EXPECT_EQ(slice(p.blocks_at[0], 4), blocks);
  EXPECT_EQ(p.max_keys, 9);
}

TEST(CudaStepPlan, LastTokenOnlyGivesOneLogitRowPerChunk) {
  const KvCacheManager kv = two_sequence_kv();
  const std::vector<TokenId> a = {1, 2, 3};
  const SequenceChunk chunks[] = {{10, a, 6, false}};
  const cuda::StepPlan p = cuda::plan_step(chunks, kv, 100, 64);
  EXPECT_EQ(p.n_rows, 1);
  EXPECT_EQ(p.ints[static_cast<std::size_t>(p.rows_at)], 2);
}

TEST(CudaStepPlan, SlidingWindowGivesTheFirstVisiblePosition) {
  const KvCacheManager kv = two_sequence_kv(3);
  const std::vector<TokenId> a = {1};
  const SequenceChunk chunks[] = {{10, a, 8, false}};
  const cuda::StepPlan p = cuda::plan_step(chunks, kv, 100, 64);
  EXPECT_EQ(p.ints[static_cast<std::size_t>(p.first_at[0])], 6);
  EXPECT_EQ(p.max_keys, 3);
}

TEST(CudaStepPlan, RefusesTokensOutsideTheVocabAndUnreservedPositions) {
  const KvCacheManager kv = two_sequence_kv();
  const std::vector<TokenId> bad_id = {100}, neg = {-1}, two = {1, 2};
  const SequenceChunk c1[] = {{10, bad_id, 8, false}};
  EXPECT_THROW(cuda::plan_step(c1, kv, 100, 64), UsageError);
  const SequenceChunk c2[] = {{10, neg, 8, false}};
  EXPECT_THROW(cuda::plan_step(c2, kv, 100, 64), UsageError);
  const SequenceChunk c3[] = {{10, two, 8, false}};  // position 9 is not reserved
  EXPECT_THROW(cuda::plan_step(c3, kv, 100, 64), UsageError);
  const SequenceChunk c4[] = {{10, two, 7, false}};  // within the cache but past max positions
  EXPECT_THROW(cuda::plan_step(c4, kv, 100, 8), UsageError);
}

}  // namespace
}  // namespace kvscope
