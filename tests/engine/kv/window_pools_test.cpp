// Sliding-window groups' pools (kv_cache_config.h): a sequence never holds more than its
// cap in a window group, some sequence of grows reaches it, and a pool sized for S such
// sequences lets S sequences run to the full context while the full groups get the rest of
// the budget.
#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "kv/kv_cache_config.h"
#include "kv/kv_cache_manager.h"
#include "util/error.h"

namespace kvscope {
namespace {

// Layers 0-9 slide over `window` tokens, 10-11 see everything (Gemma 3's 5:1, shortened).
KvCacheConfig two_groups(std::int64_t window, std::int64_t block_size, std::int64_t max_context) {
  LayerGroupConfig local, global;
  for (std::int64_t l = 0; l < 10; ++l) local.layers.push_back(l);
  local.window = window;
  global.layers = {10, 11};
  KvCacheConfig c;
  c.groups = {local, global};
  c.n_kv_heads = 1;
  c.head_dim = 8;
  c.block_size = block_size;
  c.max_context = max_context;
  c.host_storage = false;
  return c;
}

TEST(WindowPools, ASequencesCapIsTheWindowPlusOneGrowRoundedOut) {
  KvCacheConfig c = two_groups(512, 16, 32768);
  EXPECT_EQ(kv_sequence_cap_blocks(c, 0), 2048);  // no grow size given: the whole context
  c.max_grow_tokens = 1;
  EXPECT_EQ(kv_sequence_cap_blocks(c, 0), 33);  // 32 blocks of window + the one filling
  c.max_grow_tokens = 512;
  EXPECT_EQ(kv_sequence_cap_blocks(c, 0), 65);  // ceil((512 + 512 + 14) / 16)
  EXPECT_EQ(kv_sequence_cap_blocks(c, 1), 2048);
  c.max_context = 600;
  EXPECT_EQ(kv_sequence_cap_blocks(c, 0), 38);  // never more than the whole context
}

// Grows of random sizes up to G never take a sequence past its cap; the worst case (single
// tokens until the window's first key is one slot short of a block's end, then a grow of G)
// reaches it exactly.
TEST(WindowPools, NoGrowPatternPassesTheCapAndOneReachesIt) {
  for (const std::int64_t grow : {1, 3, 7, 20}) {
    KvCacheConfig c = two_groups(21, 4, 400);
    c.max_grow_tokens = grow;
    c.n_blocks = 200;
    const std::int64_t cap = kv_sequence_cap_blocks(c, 0);
    std::mt19937 rng(static_cast<std::uint32_t>(grow));
    std::int64_t most = 0;
    for (int trial = 0; trial < 40; ++trial) {
      KvCacheManager m(c);
      m.add_sequence(0);
      while (m.n_tokens(0) < c.max_context) {
        const std::int64_t left = c.max_context - m.n_tokens(0);
        std::int64_t n = std::uniform_int_distribution<std::int64_t>(1, grow)(rng);
        // the adversarial trial: single tokens, then a whole grow at the worst offset
        if (trial == 0) n = (m.n_tokens(0) - 21 + 1) % 4 == 3 ? grow : 1;
        m.grow(0, std::min(n, left));
        most = std::max(most, m.usage(0).n_used);
        ASSERT_LE(m.usage(0).n_used, cap) << "grow " << grow << " at " << m.n_tokens(0);
      }
    }
    EXPECT_EQ(most, cap) << "grow " << grow;
  }
}

TEST(WindowPools, TheFullGroupsTakeWhatTheCappedWindowGroupLeaves) {
  KvCacheConfig c = two_groups(32, 16, 4096);
  c.window_sequences = 2;
  c.max_grow_tokens = 16;
  const std::int64_t local_block = kv_group_layout(c, 0).block_bytes();
  const std::int64_t global_block = kv_group_layout(c, 1).block_bytes();
  const std::int64_t cap = 2 * kv_sequence_cap_blocks(c, 0);  // 2 x ceil(62 / 16) = 8
  ASSERT_EQ(cap, 8);
  c.budget_bytes = cap * local_block + 100 * global_block + global_block / 2;
  const std::int64_t n = kv_blocks_per_group(c);
  EXPECT_EQ(n, 100);
  EXPECT_EQ(kv_group_pool_blocks(c, n), (std::vector<std::int64_t>{cap, 100}));
  EXPECT_LE(kv_group_pools_bytes(c, n), c.budget_bytes);
  EXPECT_GT(kv_group_pools_bytes(c, n + 1), c.budget_bytes);

  // a budget too small for the cap: both groups get the same n, as without windows
  c.budget_bytes = 5 * (local_block + global_block);
  EXPECT_EQ(kv_blocks_per_group(c), 5);
  EXPECT_EQ(kv_group_pool_blocks(c, 5), (std::vector<std::int64_t>{5, 5}));

  // no cap asked: every group the same, the budget over one block of each
  c.window_sequences = 0;
  c.budget_bytes = cap * local_block + 100 * global_block;
  EXPECT_EQ(kv_blocks_per_group(c), c.budget_bytes / (local_block + global_block));
}

TEST(WindowPools, OnlyCappedGroupsTakeNoMoreThanTheirCaps) {
  LayerGroupConfig local;
  local.layers = {0, 1};
  local.window = 64;
  KvCacheConfig c;
  c.groups = {local};
  c.n_kv_heads = 2;
  c.head_dim = 8;
  c.block_size = 16;
  c.max_context = 8192;
  c.window_sequences = 3;
  c.max_grow_tokens = 32;
  c.budget_bytes = std::int64_t{1} << 30;
  const std::int64_t n = kv_blocks_per_group(c);
  EXPECT_EQ(n, 3 * kv_sequence_cap_blocks(c, 0));
  EXPECT_EQ(KvCacheManager(c).usage(0).n_blocks, n);
}

// S sequences grown in lockstep, a chunk at a time, reach the whole context in a pool sized
// for S; one more sequence past the window then finds no block in the window group.
TEST(WindowPools, ThePoolHoldsItsSequencesToTheWholeContext) {
  KvCacheConfig c = two_groups(48, 16, 1024);
  c.window_sequences = 3;
  c.max_grow_tokens = 40;
  c.n_blocks = 3 * 64;  // the full group: three whole contexts
  KvCacheManager m(c);
  EXPECT_EQ(m.usage(0).n_blocks, 3 * kv_sequence_cap_blocks(c, 0));
  for (SeqId s = 0; s < 3; ++s) m.add_sequence(s);
  while (m.n_tokens(0) < c.max_context) {
    for (SeqId s = 0; s < 3; ++s) {
      m.grow(s, std::min<std::int64_t>(40, c.max_context - m.n_tokens(s)));
    }
  }
  EXPECT_EQ(m.usage(1).n_free, 0);
  m.free_sequence(2);
  m.add_sequence(3);
  m.add_sequence(4);
  EXPECT_EQ(m.usage(0).n_free, 21 - 2 * 5);   // two sequences keep 5 window blocks each
  for (int i = 0; i < 3; ++i) m.grow(3, 40);  // 120 tokens: blocks 2-7
  for (int i = 0; i < 2; ++i) m.grow(4, 40);  // 80 tokens: blocks 0-4
  EXPECT_EQ(m.usage(0).n_free, 0);
  // a fourth sequence past the window: the window group is dry, the full group is not
  EXPECT_FALSE(m.can_grow(4, 40));
  EXPECT_GT(m.usage(1).n_free, 3);
  EXPECT_THROW(m.grow(4, 40), CapacityError);
}

}  // namespace
}  // namespace kvscope
