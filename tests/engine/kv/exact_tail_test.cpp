// The exact tail (kv/exact_tail.h) through the KvCacheManager: which blocks carry fp16
// copies as sequences grow, fork, shrink and end, what the copies hold, and what they cost.
#include "kv/exact_tail.h"

#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kv/kv_cache_manager.h"
#include "kv/kv_cache_observer.h"
#include "util/error.h"
#include "util/half.h"

namespace kvscope {
namespace {

// 2 layers in one int4 group, 2 KV heads, head_dim 8, block_size 4; tail of 2 blocks.
KvCacheConfig tail_config(std::int64_t shadows = 16, std::int64_t tail = 2) {
  KvCacheConfig c;
  c.groups = uniform_layer_groups(2, KvDtype::Int4);
  c.n_kv_heads = 2;
  c.head_dim = 8;
  c.block_size = 4;
  c.max_context = 1000;
  c.n_blocks = 32;
  c.exact_tail_blocks = tail;
  c.exact_tail_shadows = shadows;
  return c;
}

// Which logical blocks of a sequence have an fp16 copy, as a string of 0 / 1.
std::string copies(const KvCacheManager& m, SeqId seq) {
  std::string s;
  const BlockTable& t = m.block_table(seq, 0);
  for (std::int64_t b = 0; b < t.n_blocks(); ++b)
    s += m.exact_tail(0)->shadow_index(t.block(b)) >= 0 ? '1' : '0';
  return s;
}

TEST(ExactTail, OnlyQuantizedGroupsKeepOne) {
  KvCacheConfig c = tail_config();
  c.groups = {{{0}, KvDtype::F16, KvDtype::F16, 0}, {{1}, KvDtype::F16, KvDtype::Int4, 0}};
  const KvCacheManager m(c);
  EXPECT_EQ(m.exact_tail(0), nullptr);
  ASSERT_NE(m.exact_tail(1), nullptr);
  EXPECT_EQ(m.exact_tail(1)->n_shadows(), 16);
  EXPECT_EQ(m.exact_tail(1)->layout().k_dtype, KvDtype::F16);
  EXPECT_EQ(m.exact_tail(1)->layout().v_dtype, KvDtype::F16);
}

TEST(ExactTail, AGrowKeepsTheBlocksItsQueriesReadExactly) {
  KvCacheManager m(tail_config());
  m.add_sequence(1);
  m.grow(1, 10);  // a prompt: blocks 0-2, all read exactly by some query of the step
  EXPECT_EQ(copies(m, 1), "111");
  m.grow(1, 1);  // position 10, block 2: reads blocks 1 and 2 exactly
  EXPECT_EQ(copies(m, 1), "011");
  m.grow(1, 2);  // positions 11, 12: the query at 11 still reads block 1
  EXPECT_EQ(copies(m, 1), "0111");
  m.grow(1, 1);  // position 13 (block 3) reads blocks 2 and 3
  EXPECT_EQ(copies(m, 1), "0011");
  EXPECT_EQ(m.exact_tail(0)->n_free(), 14);
}

TEST(ExactTail, CopiesHoldTheFp16OfWhatWasWritten) {
  KvCacheManager m(tail_config());
  m.add_sequence(1);
  m.grow(1, 3);
  std::vector<float> k(16), v(16);
  for (std::size_t i = 0; i < k.size(); ++i) {
    k[i] = 0.1f * static_cast<float>(i) - 0.77f;
    v[i] = 1.0f / (1.0f + static_cast<float>(i));
  }
  m.bytes().write_token(1, 1, 2, k.data(), v.data());
  const ExactTail& tail = *m.exact_tail(0);
  const KvSlot s = m.slot(1, 0, 2);
  const std::uint8_t* copy = tail.shadow(s.block);
  ASSERT_NE(copy, nullptr);
  for (std::int64_t head = 0; head < 2; ++head) {
    const auto* kd =
        reinterpret_cast<const std::uint16_t*>(tail.layout().data(copy, KvSide::K, 1, head, 2));
    const auto* vd =
        reinterpret_cast<const std::uint16_t*>(tail.layout().data(copy, KvSide::V, 1, head, 2));
    for (std::int64_t i = 0; i < 8; ++i) {
      EXPECT_EQ(kd[i], float_to_fp16(k[head * 8 + i]));
      EXPECT_EQ(vd[i], float_to_fp16(v[head * 8 + i]));
    }
  }
}

TEST(ExactTail, CopyOnWriteCopiesTheFp16CopyToo) {
  KvCacheManager m(tail_config());
  m.add_sequence(1);
  m.grow(1, 6);  // block 1 half full
  std::vector<float> k(16, 0.25f), v(16, -0.5f);
  m.bytes().write_token(1, 0, 4, k.data(), v.data());
  m.fork(1, 2);
  m.grow(2, 1);  // copies the shared partial block 1
  const ExactTail& tail = *m.exact_tail(0);
  const BlockId parent = m.block_table(1, 0).block(1), child = m.block_table(2, 0).block(1);
  ASSERT_NE(parent, child);
  ASSERT_NE(tail.shadow(parent), nullptr);
  ASSERT_NE(tail.shadow(child), nullptr);
  EXPECT_EQ(std::memcmp(tail.shadow(parent), tail.shadow(child), tail.layout().block_bytes()), 0);
  EXPECT_EQ(copies(m, 2), "11");
}

TEST(ExactTail, FreedBlocksGiveTheirCopiesBack) {
  KvCacheManager m(tail_config());
  m.add_sequence(1);
  m.grow(1, 12);
  m.fork(1, 2);
  EXPECT_EQ(m.exact_tail(0)->n_free(), 13);
  m.free_sequence(1);  // still held by 2
  EXPECT_EQ(m.exact_tail(0)->n_free(), 13);
  m.truncate(2, 4);
  EXPECT_EQ(m.exact_tail(0)->n_free(), 15);
  m.preempt(2);
  EXPECT_EQ(m.exact_tail(0)->n_free(), 16);
}

TEST(ExactTail, BlocksFindingNoCopyFreeAreReadQuantized) {
  KvCacheManager m(tail_config(/*shadows=*/2));
  m.add_sequence(1);
  m.grow(1, 12);  // three blocks, two copies
  EXPECT_EQ(copies(m, 1), "110");
  // position 12 (block 3) reads blocks 2 and 3: copies 0 and 1 are free again and the new
  // block takes one; block 2, appended when none was free, stays without
  m.grow(1, 1);
  EXPECT_EQ(copies(m, 1), "0001");
  EXPECT_EQ(m.exact_tail(0)->n_free(), 1);
}

TEST(ExactTail, ItsCopiesComeOutOfTheBudget) {
  KvCacheConfig c = tail_config(/*shadows=*/10);
  c.n_blocks = 0;
  const std::int64_t block = kv_group_layout(c, 0).block_bytes();
  // fp16 K and V of 2 layers x 2 heads x 4 slots x 8 values
  const std::int64_t copy = 2 * 2 * 2 * 4 * 8 * 2;
  EXPECT_EQ(kv_exact_tail_bytes(c), 10 * copy);
  c.budget_bytes = 10 * copy + 7 * block + block / 2;
  EXPECT_EQ(kv_blocks_per_group(c), 7);
  c.budget_bytes = 10 * copy + block - 1;
  try {
    (void)kv_blocks_per_group(c);
    FAIL() << "no error";
  } catch (const CapacityError& e) {
    EXPECT_NE(std::string(e.what()).find("exact tail"), std::string::npos) << e.what();
  }
  c.exact_tail_blocks = 0;
  c.exact_tail_shadows = 0;
  EXPECT_EQ(kv_exact_tail_bytes(c), 0);
}

TEST(ExactTail, TheSnapshotCountsTheCopiesAndTheirBytes) {
  KvCacheManager m(tail_config(/*shadows=*/6));
  m.add_sequence(1);
  m.grow(1, 10);
  m.grow(1, 1);  // copies on blocks 1 and 2
  const CacheSnapshot s = snapshot_of(m);
  const LayerGroupSnapshot& g = s.groups[0];
  const std::int64_t copy = m.exact_tail(0)->layout().block_bytes();
  EXPECT_EQ(g.exact_copies, 6);
  EXPECT_EQ(g.exact_copies_used, 2);
  EXPECT_EQ(g.exact_copy_bytes, copy);
  EXPECT_FALSE(g.blocks[static_cast<std::size_t>(m.block_table(1, 0).block(0))].exact_copy);
  EXPECT_TRUE(g.blocks[static_cast<std::size_t>(m.block_table(1, 0).block(2))].exact_copy);
  EXPECT_EQ(s.pool_bytes, 32 * g.block_bytes + 6 * copy);
  EXPECT_EQ(s.used_bytes, 3 * g.block_bytes + 2 * copy);
  EXPECT_EQ(s.exact_copies_used, 2);
}

TEST(ExactTail, InconsistentSettingsAreUsageErrors) {
  KvCacheConfig c = tail_config(/*shadows=*/0);
  EXPECT_THROW(validate(c), UsageError);
  c = tail_config(/*shadows=*/4, /*tail=*/0);
  EXPECT_THROW(validate(c), UsageError);
}

// Without host storage (a device backend holds the bytes) the tail keeps the same
// bookkeeping, holds no bytes, and a copy-on-write names both blocks' shadows so the device
// can copy the fp16 copy as well.
TEST(ExactTail, WithoutHostStorageOnlyTheShadowIndicesAreKept) {
  KvCacheConfig c = tail_config();
  c.host_storage = false;
  KvCacheManager m(c);
  m.add_sequence(1);
  m.grow(1, 6);  // blocks 0 and 1, block 1 half full
  const ExactTail& tail = *m.exact_tail(0);
  EXPECT_EQ(tail.shadow_bytes(), nullptr);
  EXPECT_EQ(tail.shadow(m.block_table(1, 0).block(1)), nullptr);
  EXPECT_EQ(copies(m, 1), "11");
  const CacheSnapshot snap = snapshot_of(m);  // the panel shows the copies all the same
  EXPECT_EQ(snap.groups[0].exact_copies_used, 2);
  EXPECT_TRUE(
      snap.groups[0].blocks[static_cast<std::size_t>(m.block_table(1, 0).block(1))].exact_copy);
  m.fork(1, 2);
  std::vector<BlockCopy> copied;
  m.grow(2, 1, &copied);
  ASSERT_EQ(copied.size(), 1u);
  EXPECT_EQ(copied[0].src, m.block_table(1, 0).block(1));
  EXPECT_EQ(copied[0].dst, m.block_table(2, 0).block(1));
  EXPECT_EQ(copied[0].src_shadow, tail.shadow_index(copied[0].src));
  EXPECT_EQ(copied[0].dst_shadow, tail.shadow_index(copied[0].dst));
  EXPECT_GE(copied[0].src_shadow, 0);
  EXPECT_GE(copied[0].dst_shadow, 0);
  EXPECT_NE(copied[0].src_shadow, copied[0].dst_shadow);
}

}  // namespace
}  // namespace kvscope
