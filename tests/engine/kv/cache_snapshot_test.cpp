#include "kv/cache_snapshot.h"

#include <vector>

#include <gtest/gtest.h>

#include "kv/kv_cache_manager.h"
#include "kv/kv_cache_observer.h"

namespace kvscope {
namespace {

// 2 layers, 2 KV heads, head_dim 8, fp16: 64 bytes per token per layer; block_size 4.
KvCacheConfig config(std::int64_t n_blocks = 8) {
  KvCacheConfig c;
  c.groups = uniform_layer_groups(2, KvDtype::F16);
  c.n_kv_heads = 2;
  c.head_dim = 8;
  c.block_size = 4;
  c.max_context = 32;
  c.n_blocks = n_blocks;
  return c;
}

TEST(CacheSnapshot, EmptyCacheHasOnlyFreeBlocksAndNoFragmentation) {
  const KvCacheManager m(config());
  const CacheSnapshot s = snapshot_of(m);
  ASSERT_EQ(s.groups.size(), 1u);
  EXPECT_EQ(s.n_blocks, 8);
  EXPECT_EQ(s.n_free, 8);
  EXPECT_EQ(s.n_used, 0);
  EXPECT_EQ(s.internal_fragmentation, 0.0);
  EXPECT_EQ(s.pool_bytes, 8 * 4 * 2 * 64);
  for (const BlockInfo& b : s.groups[0].blocks) {
    EXPECT_TRUE(b.is_free());
    EXPECT_EQ(b.owner, -1);
  }
  ASSERT_EQ(s.layers.size(), 2u);
  EXPECT_EQ(s.layers[1].bytes_in_use, 0);
}

// seq 1: 6 tokens in blocks 0 (full) and 1 (2 of 4); seq 2 = fork of 1; seq 3: 1 token in block 2.
TEST(CacheSnapshot, HandComputedFragmentationSharingAndContiguousNumbers) {
  KvCacheManager m(config());
  m.add_sequence(1);
  m.grow(1, 6);
  m.fork(1, 2);
  m.add_sequence(3);
  m.grow(3, 1);
  const CacheSnapshot s = snapshot_of(m);
  const LayerGroupSnapshot& g = s.groups[0];
  const std::int64_t block_bytes = 4 * 2 * 64;
  EXPECT_EQ(g.block_bytes, block_bytes);
  EXPECT_EQ(g.n_used, 3);
  EXPECT_EQ(g.n_free, 5);
  EXPECT_EQ(g.n_shared, 2);
  EXPECT_EQ(g.allocated_slots, 12);
  EXPECT_EQ(g.filled_slots, 4 + 2 + 1);
  EXPECT_DOUBLE_EQ(g.internal_fragmentation, 5.0 / 12.0);
  EXPECT_EQ(g.shared_savings_bytes, 2 * block_bytes);

  EXPECT_EQ(g.blocks[0].owner, 1);
  EXPECT_EQ(g.blocks[0].refcount, 2);
  EXPECT_EQ(g.blocks[0].filled_slots, 4);
  EXPECT_EQ(g.blocks[1].owner, 1);
  EXPECT_EQ(g.blocks[1].filled_slots, 2);
  EXPECT_EQ(g.blocks[2].owner, 3);
  EXPECT_EQ(g.blocks[2].refcount, 1);
  EXPECT_EQ(g.blocks[2].filled_slots, 1);
  EXPECT_EQ(g.blocks[3].owner, -1);

  // Contiguous: 3 sequences x 32 slots reserved, 6 + 6 + 1 used, 128 bytes per token.
  EXPECT_EQ(s.contiguous.reserved_slots, 96);
  EXPECT_EQ(s.contiguous.used_slots, 13);
  EXPECT_EQ(s.contiguous.wasted_slots, 83);
  EXPECT_EQ(s.contiguous.wasted_bytes, 83 * 128);
  EXPECT_DOUBLE_EQ(s.contiguous.waste_fraction(), 83.0 / 96.0);
  EXPECT_EQ(s.n_shared, 2);  // one group: the totals equal its count
  EXPECT_EQ(s.used_bytes, 3 * block_bytes);
  EXPECT_EQ(s.layers[0].bytes_in_use, 3 * 4 * 64);

  ASSERT_EQ(s.sequences.size(), 3u);
  EXPECT_EQ(s.sequences[1].id, 2);
  EXPECT_EQ(s.sequences[1].n_tokens, 6);
}

TEST(CacheSnapshot, OwnerIsTheLowestLiveSequenceHoldingTheBlock) {
  KvCacheManager m(config());
  m.add_sequence(5);
  m.grow(5, 4);
  m.fork(5, 2);
  EXPECT_EQ(snapshot_of(m).groups[0].blocks[0].owner, 2);
  m.free_sequence(2);
  EXPECT_EQ(snapshot_of(m).groups[0].blocks[0].owner, 5);
}

TEST(CacheSnapshot, PreemptedSequencesHoldNothingAndAreLeftOutOfTheContiguousComparison) {
  KvCacheManager m(config());
  m.add_sequence(1);
  m.grow(1, 5);
  m.add_sequence(2);
  m.grow(2, 3);
  m.preempt(1);
  const CacheSnapshot s = snapshot_of(m);
  EXPECT_EQ(s.n_used, 1);
  EXPECT_EQ(s.contiguous.reserved_slots, 32);
  EXPECT_EQ(s.contiguous.used_slots, 3);
  EXPECT_TRUE(s.sequences[0].preempted);
  EXPECT_EQ(s.sequences[0].preempted_length, 5);
  EXPECT_EQ(s.sequences[0].n_tokens, 0);
}

TEST(CacheSnapshot, TotalsSumTheGroupsAndLayerErrorsComeFromRecordedSums) {
  KvCacheConfig c = config(4);
  c.groups = {{{0}, KvDtype::F16, KvDtype::F16, 0}, {{1}, KvDtype::Int8, KvDtype::Int4, 4}};
  KvCacheManager m(c);
  m.add_sequence(1);
  m.grow(1, 9);  // 3 blocks per group
  m.grow(1, 1);  // window 4 from position 9: keys >= 6, block [0,4) goes in group 1
  KvCacheObserver observer(m.config());
  observer.record_quant_error(1, {4.0, 16.0, 4}, {9.0, 9.0, 1});
  const CacheSnapshot s = observer.snapshot(m);
  ASSERT_EQ(s.groups.size(), 2u);
  EXPECT_EQ(s.groups[0].n_used, 3);
  EXPECT_EQ(s.groups[1].n_used, 2);
  EXPECT_EQ(s.n_used, 5);
  EXPECT_EQ(s.n_blocks, 8);
  EXPECT_EQ(s.allocated_slots, 20);
  EXPECT_EQ(s.filled_slots, 10 + 6);  // group 1 still holds positions 4..9
  EXPECT_DOUBLE_EQ(s.internal_fragmentation, 4.0 / 20.0);
  EXPECT_EQ(s.used_bytes, 3 * s.groups[0].block_bytes + 2 * s.groups[1].block_bytes);
  EXPECT_EQ(s.groups[1].k_dtype, KvDtype::Int8);
  EXPECT_EQ(s.groups[1].v_dtype, KvDtype::Int4);
  EXPECT_EQ(s.groups[1].window, 4);
  // Contiguous: 32 slots in the full group, 4 in the window group.
  EXPECT_EQ(s.contiguous.reserved_slots, 36);
  EXPECT_EQ(s.contiguous.used_slots, 10 + 4);

  EXPECT_EQ(s.layers[1].group, 1);
  EXPECT_DOUBLE_EQ(s.layers[1].k.rms_error(), 1.0);
  EXPECT_DOUBLE_EQ(s.layers[1].k.relative_rms_error(), 0.5);
  EXPECT_DOUBLE_EQ(s.layers[1].v.rms_error(), 3.0);
  EXPECT_EQ(s.layers[0].k.count, 0);
  EXPECT_EQ(s.layers[0].k.rms_error(), 0.0);
}

}  // namespace
}  // namespace kvscope
