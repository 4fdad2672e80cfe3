#include "kv/kv_cache_manager.h"

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kv/kv_cache_observer.h"
#include "util/error.h"

namespace kvscope {
namespace {

// 2 layers in one group, 2 KV heads, head_dim 8, block_size 4.
KvCacheConfig small_config(std::int64_t n_blocks = 8, KvDtype dtype = KvDtype::F16,
                           std::int64_t window = 0, std::int64_t block_size = 4) {
  KvCacheConfig c;
  c.groups = uniform_layer_groups(2, dtype, window);
  c.n_kv_heads = 2;
  c.head_dim = 8;
  c.block_size = block_size;
  c.max_context = 1000;
  c.n_blocks = n_blocks;
  return c;
}

std::vector<std::uint8_t> block_bytes(const KvCacheManager& m, std::int64_t group, BlockId id) {
  const std::uint8_t* p = m.bytes().block_data(group, id);
  return {p, p + m.layout(group).block_bytes()};
}

// Writes token `pos` of every layer with values derived from `tag`.
void write_tagged(KvCacheManager& m, SeqId seq, std::int64_t pos, float tag) {
  std::vector<float> k(16), v(16);
  for (std::size_t i = 0; i < k.size(); ++i) {
    k[i] = tag + 0.01f * static_cast<float>(i);
    v[i] = -tag - 0.01f * static_cast<float>(i);
  }
  for (std::int64_t layer = 0; layer < m.n_layers(); ++layer) {
    m.bytes().write_token(seq, layer, pos, k.data(), v.data());
  }
}

template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(KvCacheManager, InconsistentConfigsAreUsageErrorsNamingTheField) {
  KvCacheConfig c = small_config();
  c.groups = {{{0}, KvDtype::F16, KvDtype::F16, 0}, {{2}, KvDtype::F16, KvDtype::F16, 0}};
  EXPECT_NE(error_of([&] { KvCacheManager m(c); }).find("layer 2, outside [0, 2)"),
            std::string::npos);
  c.groups = {{{0, 1}, KvDtype::F16, KvDtype::F16, 0}, {{1}, KvDtype::F16, KvDtype::F16, 0}};
  EXPECT_THROW(KvCacheManager{c}, UsageError);  // layer 1 twice (and layer 2 out of range)
  c = small_config();
  c.groups.clear();
  EXPECT_THROW(KvCacheManager{c}, UsageError);
  c = small_config();
  c.max_context = 0;
  EXPECT_NE(error_of([&] { KvCacheManager m(c); }).find("max_context 0"), std::string::npos);
  c = small_config();
  c.budget_bytes = 1 << 20;  // and n_blocks
  EXPECT_THROW(KvCacheManager{c}, UsageError);
  c.budget_bytes = c.n_blocks = 0;
  EXPECT_THROW(KvCacheManager{c}, UsageError);
  c = small_config();
  c.groups[0].window = -1;
  EXPECT_THROW(KvCacheManager{c}, UsageError);
}

TEST(KvCacheManager, BudgetGivesEveryGroupTheSameBlockCount) {
  KvCacheConfig c = small_config();
  c.groups = {{{0}, KvDtype::F16, KvDtype::F16, 0}, {{1}, KvDtype::Int4, KvDtype::Int4, 0}};
  c.n_blocks = 0;
  const std::int64_t set =
      kv_group_layout(c, 0).block_bytes() + kv_group_layout(c, 1).block_bytes();
  c.budget_bytes = 5 * set + set - 1;
  const KvCacheManager m(c);
  EXPECT_EQ(m.pool(0).n_blocks(), 5);
  EXPECT_EQ(m.pool(1).n_blocks(), 5);
  EXPECT_EQ(m.usage().n_blocks, 10);
  EXPECT_EQ(m.layout(0).block_bytes(),
            kv_bytes_per_block_per_layer(KvDtype::F16, KvDtype::F16, 2, 8, 4));
  // int4: 4 slots x 2 heads x (K 4 + 8, V 4 + 2) + K offsets 2 heads x 8 x 2
  EXPECT_EQ(m.layout(1).block_bytes(), 4 * 2 * 18 + 32);

  c.budget_bytes = set - 1;
  const std::string msg = error_of([&] { KvCacheManager tiny(c); });
  EXPECT_NE(msg.find(std::to_string(set - 1) + " bytes holds no block"), std::string::npos) << msg;
  EXPECT_NE(msg.find("takes " + std::to_string(set) + " bytes"), std::string::npos) << msg;
}

TEST(KvCacheManager, GrowReservesSlotsThatAddressBlocksInOrder) {
  KvCacheManager m(small_config());
  m.add_sequence(1);
  EXPECT_EQ(m.blocks_needed(1, 6, 0), 2);
  m.grow(1, 6);
  EXPECT_EQ(m.n_tokens(1), 6);
  EXPECT_EQ(m.usage().n_used, 2);
  const KvSlot s = m.slot(1, 0, 5);
  EXPECT_EQ(s.block, m.block_table(1, 0).block(1));
  EXPECT_EQ(s.slot, 1);
  EXPECT_THROW(m.slot(1, 0, 6), UsageError);
  EXPECT_THROW(m.slot(1, 1, 0), UsageError);  // no group 1
  m.grow(1, 2);                               // fills the tail, no new block
  EXPECT_EQ(m.usage().n_used, 2);
  m.grow(1, 0);
  EXPECT_EQ(m.n_tokens(1), 8);
  EXPECT_THROW(m.grow(1, -1), UsageError);
  EXPECT_THROW(m.grow(2, 1), UsageError);
}

TEST(KvCacheManager, OutOfBlocksIsACapacityErrorNamingTheNumbersAndChangesNothing) {
  KvCacheManager m(small_config(3));
  m.add_sequence(7);
  m.grow(7, 10);
  EXPECT_TRUE(m.can_grow(7, 2));
  EXPECT_FALSE(m.can_grow(7, 3));
  const std::string msg = error_of([&] { m.grow(7, 3); });
  EXPECT_NE(msg.find("sequence 7 needs 1 more blocks in layer group 0 to grow from 10 to 13 "
                     "tokens, but only 0 of 3 blocks are free"),
            std::string::npos)
      << msg;
  EXPECT_EQ(m.n_tokens(7), 10);
  EXPECT_EQ(m.usage().n_used, 3);
}

TEST(KvCacheManager, GrowIsAllOrNothingAcrossLayerGroups) {
  KvCacheConfig c = small_config(3);
  c.groups = {{{0}, KvDtype::F16, KvDtype::F16, 0}, {{1}, KvDtype::F16, KvDtype::F16, 4}};
  KvCacheManager m(c);
  m.add_sequence(1);
  m.grow(1, 12);
  // The full-attention group is out of blocks; the window group would release two.
  EXPECT_THROW(m.grow(1, 1), CapacityError);
  EXPECT_EQ(m.usage(1).n_used, 3);
  EXPECT_EQ(m.block_table(1, 1).first_held(), 0);
}

TEST(KvCacheManager, GrowPastTheContextLengthIsACapacityErrorNamingBoth) {
  KvCacheConfig c = small_config();
  c.max_context = 10;
  KvCacheManager m(c);
  m.add_sequence(3);
  m.grow(3, 8);
  EXPECT_FALSE(m.can_grow(3, 3));
  const std::string msg = error_of([&] { m.grow(3, 3); });
  EXPECT_NE(msg.find("growing from 8 by 3 tokens exceeds the context length 10"), std::string::npos)
      << msg;
}

TEST(KvCacheManager, ForkSharesEveryBlockWithARefcount) {
  KvCacheManager m(small_config());
  m.add_sequence(1);
  m.grow(1, 6);
  m.fork(1, 2);
  EXPECT_EQ(m.n_tokens(2), 6);
  EXPECT_EQ(m.usage().n_used, 2);
  for (std::int64_t i = 0; i < 2; ++i) {
    EXPECT_EQ(m.block_table(2, 0).block(i), m.block_table(1, 0).block(i));
    EXPECT_EQ(m.pool(0).refcount(m.block_table(1, 0).block(i)), 2);
  }
  EXPECT_THROW(m.fork(1, 2), UsageError);
  EXPECT_THROW(m.fork(9, 10), UsageError);
}

TEST(KvCacheManager, CopyOnWriteCopiesTheSharedTailOnceAndLeavesTheParentUnchanged) {
  KvCacheManager m(small_config());
  m.add_sequence(1);
  m.grow(1, 6);
  for (std::int64_t pos = 0; pos < 6; ++pos) write_tagged(m, 1, pos, static_cast<float>(pos));
  m.fork(1, 2);
  const BlockId shared_tail = m.block_table(1, 0).block(1);
  const std::vector<std::uint8_t> parent_before = block_bytes(m, 0, shared_tail);
  EXPECT_THROW(write_tagged(m, 2, 5, 99.0f), UsageError);  // shared: grow first

  std::vector<BlockCopy> copies;
  EXPECT_EQ(m.blocks_needed(2, 1, 0), 1);
  m.grow(2, 1, &copies);
  ASSERT_EQ(copies.size(), 1u);
  const BlockId child_tail = m.block_table(2, 0).block(1);
  EXPECT_EQ(copies[0].group, 0);
  EXPECT_EQ(copies[0].src, shared_tail);
  EXPECT_EQ(copies[0].dst, child_tail);
  EXPECT_NE(child_tail, shared_tail);
  EXPECT_EQ(m.block_table(2, 0).block(0), m.block_table(1, 0).block(0));  // full block still shared
  EXPECT_EQ(m.pool(0).refcount(shared_tail), 1);
  EXPECT_EQ(block_bytes(m, 0, child_tail), parent_before);  // the copy has the prefix

  write_tagged(m, 2, 6, 99.0f);
  write_tagged(m, 2, 5, 42.0f);  // overwrite a copied position
  EXPECT_EQ(block_bytes(m, 0, shared_tail), parent_before);

  copies.clear();
  m.grow(2, 1, &copies);  // the child's tail is its own now
  m.grow(1, 1, &copies);  // and so is the parent's
  EXPECT_TRUE(copies.empty());
  EXPECT_EQ(m.usage().n_used, 3);
}

TEST(KvCacheManager, ForkAtABlockBoundaryNeedsNoCopy) {
  KvCacheManager m(small_config());
  m.add_sequence(1);
  m.grow(1, 8);
  m.fork(1, 2);
  std::vector<BlockCopy> copies;
  EXPECT_EQ(m.blocks_needed(2, 1, 0), 1);
  m.grow(2, 1, &copies);
  EXPECT_TRUE(copies.empty());
  EXPECT_EQ(m.usage().n_used, 3);
}

// A new sequence starting from another's prefix: fork, then truncate. The kept blocks stay
// shared; the partly kept tail is copied on the first grow, leaving the source unchanged.
TEST(KvCacheManager, TruncatedForkSharesThePrefixAndCopiesThePartialTailOnGrowth) {
  KvCacheManager m(small_config(8));
  m.add_sequence(1);
  m.grow(1, 10);
  for (std::int64_t pos = 0; pos < 10; ++pos) write_tagged(m, 1, pos, static_cast<float>(pos));
  const std::vector<std::uint8_t> source_tail = block_bytes(m, 0, m.block_table(1, 0).block(1));
  m.fork(1, 2);
  m.truncate(2, 6);  // blocks 0 (full) and 1 (2 of 4 slots) kept, block 2 released
  EXPECT_EQ(m.n_tokens(2), 6);
  EXPECT_EQ(m.block_table(2, 0).n_blocks(), 2);
  EXPECT_EQ(m.usage().n_used, 3);
  EXPECT_EQ(m.pool(0).refcount(m.block_table(1, 0).block(2)), 1);
  std::vector<BlockCopy> copies;
  m.grow(2, 1, &copies);
  ASSERT_EQ(copies.size(), 1u);
  EXPECT_EQ(copies[0].src, m.block_table(1, 0).block(1));
  write_tagged(m, 2, 6, 100.0f);
  EXPECT_EQ(block_bytes(m, 0, m.block_table(1, 0).block(1)), source_tail);
  EXPECT_EQ(m.block_table(2, 0).block(0), m.block_table(1, 0).block(0));
  EXPECT_EQ(m.usage().n_used, 4);
  EXPECT_THROW(m.truncate(2, 8), UsageError);  // past its 7 tokens
}

TEST(KvCacheManager, TruncateRefusesToKeepTokensWhoseWindowBlocksAreGone) {
  KvCacheManager m(small_config(8, KvDtype::F16, 4));
  m.add_sequence(1);
  m.grow(1, 11);
  m.grow(1, 1);  // window 4: the query at 11 sees 8..11, blocks 0 and 1 are released
  ASSERT_EQ(m.block_table(1, 0).first_held(), 2);
  EXPECT_THROW(m.truncate(1, 10), UsageError);  // the query at 10 would need position 7
  EXPECT_EQ(m.n_tokens(1), 12);
  m.truncate(1, 11);  // the query at 11 needs 8..11
  EXPECT_EQ(m.n_tokens(1), 11);
  m.truncate(1, 0);
  EXPECT_EQ(m.usage().n_used, 0);
}

TEST(KvCacheManager, WithoutHostStorageCopiesAreOnlyReported) {
  KvCacheConfig c = small_config();
  c.host_storage = false;
  KvCacheManager m(c);
  EXPECT_FALSE(m.bytes().has_host_storage());
  m.add_sequence(1);
  m.grow(1, 3);
  m.fork(1, 2);
  std::vector<BlockCopy> copies;
  m.grow(1, 1, &copies);
  ASSERT_EQ(copies.size(), 1u);
  EXPECT_EQ(copies[0].dst, m.block_table(1, 0).block(0));
  EXPECT_THROW(m.bytes().block_data(0, 0), UsageError);
}

TEST(KvCacheManager, SlidingWindowReleasesBlocksWhollyOutsideTheWindow) {
  KvCacheManager m(small_config(8, KvDtype::F16, /*window=*/4, /*block_size=*/2));
  m.add_sequence(1);
  m.grow(1, 10);  // a prefill chunk keeps every block its own queries need
  EXPECT_EQ(m.usage().n_used, 5);
  // Queries from position 10 on see keys >= 7: blocks [0,2) [2,4) [4,6) go.
  EXPECT_EQ(m.first_visible_position(0, 10), 7);
  m.grow(1, 1);
  EXPECT_EQ(m.block_table(1, 0).first_held(), 3);
  EXPECT_EQ(m.usage().n_used, 3);
  EXPECT_THROW(m.slot(1, 0, 5), UsageError);
  EXPECT_NO_THROW(m.slot(1, 0, 6));
  EXPECT_EQ(m.first_visible_position(0, 2), 0);
}

TEST(KvCacheManager, WindowDroppedBlocksStayWhileAForkStillHoldsThem) {
  KvCacheManager m(small_config(8, KvDtype::F16, 2, 2));
  m.add_sequence(1);
  m.grow(1, 6);
  m.fork(1, 2);
  m.grow(1, 1);  // drops 2 blocks from seq 1's table; seq 2 still holds them
  EXPECT_EQ(m.block_table(1, 0).first_held(), 2);
  EXPECT_EQ(m.usage().n_used, 4);
  EXPECT_EQ(m.pool(0).refcount(m.block_table(2, 0).block(0)), 1);
  m.free_sequence(2);
  EXPECT_EQ(m.usage().n_used, 2);
}

TEST(KvCacheManager, PreemptReleasesBlocksAndRemembersTheLengthForRecompute) {
  KvCacheManager m(small_config());
  m.add_sequence(1);
  m.grow(1, 10);
  m.fork(1, 2);
  m.preempt(1);
  EXPECT_TRUE(m.is_preempted(1));
  EXPECT_EQ(m.preempted_length(1), 10);
  EXPECT_EQ(m.n_tokens(1), 0);
  EXPECT_EQ(m.usage().n_used, 3);  // seq 2 still holds them
  EXPECT_EQ(m.pool(0).refcount(m.block_table(2, 0).block(0)), 1);
  EXPECT_THROW(m.grow(1, 1), UsageError);
  EXPECT_THROW(m.preempt(1), UsageError);
  EXPECT_THROW(m.fork(1, 3), UsageError);
  EXPECT_TRUE(m.can_grow(1, 10));
  EXPECT_EQ(m.resume(1), 10);
  EXPECT_THROW(m.resume(1), UsageError);
  m.grow(1, 10);
  EXPECT_EQ(m.usage().n_used, 6);
  m.free_sequence(2);
  m.free_sequence(1);
  EXPECT_EQ(m.usage().n_used, 0);
  EXPECT_FALSE(m.has_sequence(1));
}

TEST(KvCacheManager, SequenceIdsMustBeNewOnAddAndKnownOtherwise) {
  KvCacheManager m(small_config());
  m.add_sequence(5);
  m.add_sequence(-3);
  EXPECT_THROW(m.add_sequence(5), UsageError);
  EXPECT_EQ(m.sequence_ids(), (std::vector<SeqId>{-3, 5}));
  EXPECT_NE(error_of([&] { m.free_sequence(4); }).find("unknown sequence 4"), std::string::npos);
  EXPECT_THROW(m.n_tokens(4), UsageError);
  EXPECT_THROW(m.can_grow(4, 1), UsageError);
}

TEST(KvCacheManager, LayersMapToTheirGroupAndIndexInsideIt) {
  KvCacheConfig c = small_config();
  c.groups = {{{2, 0}, KvDtype::F16, KvDtype::F16, 0}, {{1}, KvDtype::Int8, KvDtype::Int8, 0}};
  const KvCacheManager m(c);
  EXPECT_EQ(m.n_layers(), 3);
  EXPECT_EQ(m.group_of_layer(0), 0);
  EXPECT_EQ(m.layer_in_group(0), 1);
  EXPECT_EQ(m.layer_in_group(2), 0);
  EXPECT_EQ(m.group_of_layer(1), 1);
  EXPECT_EQ(m.layout(1).k_dtype, KvDtype::Int8);
  EXPECT_THROW(m.group_of_layer(3), UsageError);
}

TEST(KvCacheManager, WriteTokenStoresEveryHeadWhereTheLayoutSaysAndMeasuresError) {
  for (const KvDtype dtype : {KvDtype::F16, KvDtype::Int8, KvDtype::Int4}) {
    KvCacheManager m(small_config(8, dtype));
    KvCacheObserver observer(m.config());
    m.set_observer(&observer);
    m.add_sequence(1);
    m.grow(1, 7);
    std::mt19937 rng(3);
    std::normal_distribution<float> normal;
    std::vector<float> k(16), v(16);
    for (float& x : k) x = normal(rng);
    for (float& x : v) x = normal(rng);
    m.bytes().write_token(1, 1, 5, k.data(), v.data(), /*measure_error=*/true);

    const KvSlot s = m.slot(1, 0, 5);
    const KvBlockLayout& l = m.layout(0);
    const std::uint8_t* base = m.bytes().block_data(0, s.block);
    double sq = 0;
    for (std::int64_t h = 0; h < 2; ++h) {
      std::vector<float> out(8);
      kv_dequantize(dtype, l.data(base, KvSide::V, 1, h, s.slot),
                    l.scales(base, KvSide::V, 1, h, s.slot), 8, out.data());
      for (std::size_t i = 0; i < 8; ++i) {
        const float want = v[static_cast<std::size_t>(h) * 8 + i];
        EXPECT_NEAR(out[i], want, 0.5) << kv_dtype_name(dtype);
        sq += (double{want} - out[i]) * (double{want} - out[i]);
      }
    }
    EXPECT_EQ(observer.quant_error_k(1).count, 16);
    EXPECT_EQ(observer.quant_error_v(1).count, 16);
    EXPECT_EQ(observer.quant_error_k(0).count, 0);
    EXPECT_NEAR(observer.quant_error_v(1).sq_error, sq, 1e-12);
    observer.reset_quant_error();
    EXPECT_EQ(observer.quant_error_v(1).count, 0);
  }
}

}  // namespace
}  // namespace kvscope
