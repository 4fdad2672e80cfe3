// plan_step, the host side of a CUDA step (runs without a GPU): the packed arrays say which
// token is where, bad chunks are refused before anything reaches the device, and decode steps
// of one shape share one layout (what lets a captured CUDA graph be replayed).
#include <algorithm>
#include <span>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "backend/step_plan.h"
#include "kv/kv_cache_manager.h"
#include "plan/cuda_workspace.h"
#include "util/error.h"

namespace kvscope {
namespace {

// A device backend's cache (no host storage) of `groups`: 2 KV heads, head_dim 8, 4-token
// blocks.
KvCacheConfig device_config(std::vector<LayerGroupConfig> groups, std::int64_t max_context,
                            std::int64_t n_blocks) {
  KvCacheConfig c;
  c.groups = std::move(groups);
  c.n_kv_heads = 2;
  c.head_dim = 8;
  c.block_size = 4;
  c.max_context = max_context;
  c.n_blocks = n_blocks;
  c.host_storage = false;
  return c;
}

// two_groups: layer 0 full attention in f16, layer 1 a window of `window` in int8.
KvCacheManager two_sequence_kv(std::int64_t window = 0, bool two_groups = false) {
  KvCacheManager kv(device_config(
      two_groups ? std::vector<LayerGroupConfig>{{{0}, KvDtype::F16, KvDtype::F16, 0},
                                                 {{1}, KvDtype::Int8, KvDtype::Int8, window}}
                 : uniform_layer_groups(2, KvDtype::Int8, window),
      64, 32));
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

// The backend reserves the step tables with the planner's count (plan/cuda_workspace.h), so
// the packed arrays must take exactly that many ints, whatever the chunks and groups.
TEST(CudaStepPlan, TheTablesTakeTheIntsThePlannersWorkspaceCounts) {
  for (const std::int64_t window : {0, 3}) {
    for (const bool two_groups : {false, true}) {
      const KvCacheManager kv = two_sequence_kv(window, two_groups);
      const std::vector<TokenId> a = {7, 8, 9}, b = {5}, one = {1};
      const SequenceChunk prompt[] = {{10, a, 6, true}, {20, b, 2, false}};
      const SequenceChunk decode[] = {{10, one, 8, false}, {20, one, 2, false}};
      for (const std::span<const SequenceChunk> chunks :
           {std::span<const SequenceChunk>(prompt), std::span<const SequenceChunk>(decode)}) {
        for (const std::int64_t min_capacity : {0, 64}) {
          const cuda::StepPlan p = cuda::plan_step(chunks, kv, 100, 64, min_capacity);
          CudaStepShape shape;
          shape.n_tokens = p.n_tokens;
          shape.n_rows = p.n_rows;
          shape.n_groups = kv.n_groups();
          shape.blocks_capacity = p.blocks_capacity;
          EXPECT_EQ(static_cast<std::int64_t>(p.ints.size()), cuda_step_table_ints(shape))
              << "window " << window << ", " << kv.n_groups() << " groups, " << chunks.size()
              << " chunks";
        }
      }
    }
  }
}

// A group keeping an exact tail (kv/exact_tail.h) gets a shadow section parallel to its
// blocks: each entry's fp16 copy index (-1: none), padded with -1 to the capacity; a group
// without one gets none, and the planner's count of the ints includes the section.
TEST(CudaStepPlan, GroupsWithAnExactTailCarryTheirBlocksShadowIndices) {
  KvCacheConfig c = device_config(
      {{{0}, KvDtype::F16, KvDtype::F16, 0}, {{1}, KvDtype::Int4, KvDtype::Int4, 0}}, 64, 32);
  c.exact_tail_blocks = 1;
  c.exact_tail_shadows = 8;
  KvCacheManager kv(c);
  kv.add_sequence(10);
  kv.grow(10, 9);  // blocks 0-2, each with a copy
  kv.grow(10, 1);  // position 9 reads only its own block (2) exactly: 0 and 1 lose theirs
  const std::vector<TokenId> one = {1};
  const SequenceChunk chunks[] = {{10, one, 9, false}};
  const cuda::StepPlan p = cuda::plan_step(chunks, kv, 100, 64);
  ASSERT_EQ(p.shadows_at.size(), 2u);
  EXPECT_EQ(p.shadows_at[0], -1);
  ASSERT_GE(p.shadows_at[1], 0);
  const ExactTail& tail = *kv.exact_tail(1);
  const BlockTable& t = kv.block_table(10, 1);
  ASSERT_EQ(t.n_blocks(), 3);
  std::vector<int> expected(static_cast<std::size_t>(p.blocks_capacity), -1);
  expected[2] = tail.shadow_index(t.block(2));
  EXPECT_GE(expected[2], 0);
  const auto at = p.ints.begin() + p.shadows_at[1];
  EXPECT_EQ(std::vector<int>(at, at + p.blocks_capacity), expected);
  CudaStepShape shape;
  shape.n_tokens = p.n_tokens;
  shape.n_rows = p.n_rows;
  shape.n_groups = kv.n_groups();
  shape.blocks_capacity = p.blocks_capacity;
  shape.n_tail_groups = 1;
  EXPECT_EQ(static_cast<std::int64_t>(p.ints.size()), cuda_step_table_ints(shape));
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

TEST(CudaStepPlan, RefusesAStepWithMoreTokensThanAGridDimensionHolds) {
  KvCacheConfig c;
  c.groups = uniform_layer_groups(1, KvDtype::F16);
  c.n_kv_heads = 1;
  c.head_dim = 8;
  c.block_size = 64;
  c.max_context = 70000;
  c.n_blocks = 1100;
  c.host_storage = false;
  KvCacheManager kv(c);
  kv.add_sequence(1);
  kv.grow(1, cuda::kMaxStepTokens + 1);
  const std::vector<TokenId> ids(static_cast<std::size_t>(cuda::kMaxStepTokens + 1), 0);
  const SequenceChunk too_many[] = {{1, ids, 0, false}};
  EXPECT_THROW(cuda::plan_step(too_many, kv, 10, c.max_context), UsageError);
  const SequenceChunk most[] = {
      {1, std::span(ids).first(static_cast<std::size_t>(cuda::kMaxStepTokens)), 0, false}};
  EXPECT_EQ(cuda::plan_step(most, kv, 10, c.max_context).n_tokens, cuda::kMaxStepTokens);
}

// Two groups (full attention; sliding window of 8) with 4-token blocks, one empty sequence 10.
KvCacheManager two_group_kv() {
  KvCacheManager kv(device_config(
      {{{0}, KvDtype::Int8, KvDtype::Int8, 0}, {{1}, KvDtype::F16, KvDtype::F16, 8}}, 256, 64));
  kv.add_sequence(10);
  return kv;
}

// Every offset of a plan, in one vector, to compare layouts.
std::vector<std::int64_t> offsets(const cuda::StepPlan& p) {
  std::vector<std::int64_t> o = {p.tokens_at, p.pos_at, p.rows_at,
                                 static_cast<std::int64_t>(p.ints.size())};
  for (std::size_t g = 0; g < p.first_at.size(); ++g) {
    o.insert(o.end(), {p.first_at[g], p.table_start_at[g], p.blocks_at[g]});
  }
  return o;
}

TEST(CudaStepPlan, DecodeOffsetsStayFixedWhileTablesGrowWithinTheCapacity) {
  KvCacheManager kv = two_group_kv();
  const std::vector<TokenId> token = {3};
  std::vector<std::int64_t> first_layout;
  for (std::int64_t pos = 0; pos < 64; ++pos) {  // 1..16 blocks per group
    kv.grow(10, 1);
    const SequenceChunk chunk[] = {{10, token, pos, false}};
    const cuda::StepPlan p = cuda::plan_step(chunk, kv, 100, 256);
    ASSERT_EQ(p.blocks_capacity, cuda::kMinBlocksCapacity) << "position " << pos;
    if (pos == 0) first_layout = offsets(p);
    ASSERT_EQ(offsets(p), first_layout) << "position " << pos;
    // values change: the position, the window's first key, the tables and their padding
    EXPECT_EQ(p.ints[static_cast<std::size_t>(p.pos_at)], pos);
    EXPECT_EQ(p.ints[static_cast<std::size_t>(p.first_at[1])], std::max<std::int64_t>(0, pos - 7));
    const std::int64_t n_blocks = pos / 4 + 1;
    for (std::size_t g = 0; g < 2; ++g) {
      const auto& table = kv.block_table(10, static_cast<std::int64_t>(g)).blocks();
      const auto at = static_cast<std::size_t>(p.blocks_at[g]);
      ASSERT_EQ(static_cast<std::int64_t>(table.size()), n_blocks);
      EXPECT_TRUE(std::equal(table.begin(), table.end(), p.ints.begin() + at));
      EXPECT_TRUE(std::all_of(p.ints.begin() + at + table.size(), p.ints.begin() + at + 16,
                              [](int b) { return b == kNoBlock; }));
    }
  }
  // the window dropped group 1's oldest blocks: their entries are kNoBlock, never read
  EXPECT_EQ(kv.block_table(10, 1).blocks().front(), kNoBlock);
}

TEST(CudaStepPlan, CapacityDoublesWhenTheTablesOutgrowItAndAMinimumKeepsIt) {
  KvCacheManager kv = two_group_kv();
  kv.grow(10, 64);  // 16 blocks per group: fits the minimum capacity
  const std::vector<TokenId> token = {3};
  const SequenceChunk at63[] = {{10, token, 63, false}};
  const cuda::StepPlan small = cuda::plan_step(at63, kv, 100, 256);
  EXPECT_EQ(small.blocks_capacity, 16);
  kv.grow(10, 1);  // the 17th block
  const SequenceChunk at64[] = {{10, token, 64, false}};
  const cuda::StepPlan grown = cuda::plan_step(at64, kv, 100, 256);
  EXPECT_EQ(grown.blocks_capacity, 32);
  EXPECT_NE(offsets(grown), offsets(small));
  EXPECT_EQ(grown.first_at[1] - grown.first_at[0], small.first_at[1] - small.first_at[0] + 16);

  // the previous capacity as the minimum: a step with shorter tables keeps the layout
  const cuda::StepPlan kept = cuda::plan_step(at63, kv, 100, 256, grown.blocks_capacity);
  EXPECT_EQ(kept.blocks_capacity, 32);
  EXPECT_EQ(offsets(kept), offsets(grown));
  EXPECT_THROW(cuda::plan_step(at63, kv, 100, 256, -1), UsageError);
}

TEST(CudaStepPlan, ChunkShapeAloneFixesTheOffsets) {
  KvCacheManager kv = two_sequence_kv();
  const std::vector<TokenId> one = {1}, two = {1, 2};
  const SequenceChunk decode[] = {{10, one, 8, false}, {20, one, 2, false}};
  const SequenceChunk prompt[] = {{10, two, 7, false}};  // also 2 tokens, but 1 logit row
  const cuda::StepPlan d = cuda::plan_step(decode, kv, 100, 64);
  const cuda::StepPlan pr = cuda::plan_step(prompt, kv, 100, 64);
  EXPECT_EQ(d.n_tokens, pr.n_tokens);
  EXPECT_NE(d.n_rows, pr.n_rows);
  EXPECT_NE(offsets(d), offsets(pr));
  EXPECT_EQ(d.table_start_at[0] - d.first_at[0], 2);
  EXPECT_EQ(d.ints.size(), static_cast<std::size_t>(2 * 2 + 2 + 2 * 2 + 16));
}

TEST(CudaStepPlan, ADecodeStepIsOneTokenPerChunk) {
  const std::vector<TokenId> one = {1}, two = {1, 2};
  const SequenceChunk decode[] = {{10, one, 8, false}, {20, one, 2, true}};
  const SequenceChunk mixed[] = {{10, one, 8, false}, {20, two, 1, false}};
  EXPECT_TRUE(cuda::is_decode_step(decode));
  EXPECT_FALSE(cuda::is_decode_step(mixed));
  EXPECT_FALSE(cuda::is_decode_step({}));
}

}  // namespace
}  // namespace kvscope
