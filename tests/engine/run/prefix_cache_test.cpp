// PrefixCache on its own: which kept prefix a new sequence starts from, what it shares, and
// the order kept prefixes give way in.
#include "run/scheduler/prefix_cache.h"

#include <vector>

#include <gtest/gtest.h>

namespace kvscope {
namespace {

// 1 layer, block_size 4, n_blocks blocks.
KvCacheConfig config_of(std::int64_t n_blocks) {
  KvCacheConfig c;
  c.groups = uniform_layer_groups(1, KvDtype::F16, 0);
  c.n_kv_heads = 1;
  c.head_dim = 8;
  c.block_size = 4;
  c.max_context = 64;
  c.n_blocks = n_blocks;
  return c;
}

// A sequence holding `tokens.size()` cached tokens, kept as request `id`.
void keep_sequence(KvCacheManager& kv, PrefixCache& cache, RequestId id, SeqId seq,
                   const std::vector<TokenId>& tokens) {
  kv.add_sequence(seq);
  kv.grow(seq, static_cast<std::int64_t>(tokens.size()));
  cache.keep(id, seq, tokens);
}

TEST(PrefixCache, StartsFromTheKeptPrefixSharingTheMostTokens) {
  KvCacheManager kv(config_of(16));
  PrefixCache cache(kv);
  keep_sequence(kv, cache, 1, 10, {5, 6, 7, 8, 9});
  keep_sequence(kv, cache, 2, 11, {5, 6, 7, 1, 1, 1, 1, 1});
  keep_sequence(kv, cache, 3, 12, {5, 6, 7, 8, 9, 10, 11});

  EXPECT_EQ(cache.start(20, std::vector<TokenId>{5, 6, 7, 8, 9, 10, 3}), 6);
  EXPECT_EQ(kv.n_tokens(20), 6);
  // The first full block is shared with request 3's sequence, not copied.
  EXPECT_EQ(kv.block_table(20, 0).block(0), kv.block_table(12, 0).block(0));

  EXPECT_EQ(cache.start(21, std::vector<TokenId>{4, 4}), 0);  // shares nothing: empty
  EXPECT_EQ(kv.n_tokens(21), 0);
  EXPECT_EQ(cache.size(), 3);
  EXPECT_EQ(cache.sequence_of(2), 11);
  EXPECT_EQ(cache.sequence_of(4), -1);
}

TEST(PrefixCache, GivesWayLeastRecentlyUsedFirstAndOnlyUntilTheSequenceFits) {
  KvCacheManager kv(config_of(6));
  PrefixCache cache(kv);
  keep_sequence(kv, cache, 1, 10, {1, 2, 3, 4, 5, 6, 7, 8});     // 2 blocks
  keep_sequence(kv, cache, 2, 11, {9, 9, 9, 9, 9, 9, 9, 9});     // 2 blocks
  EXPECT_EQ(cache.start(20, std::vector<TokenId>{1, 2, 3}), 3);  // request 1 used again
  ASSERT_EQ(kv.usage(0).n_free, 2);

  // 12 tokens need 3 blocks: one prefix must go, the least recently used (request 2).
  EXPECT_EQ(cache.evict_until_fits(20, 12), 1);
  EXPECT_EQ(cache.sequence_of(2), -1);
  EXPECT_EQ(cache.sequence_of(1), 10);
  EXPECT_TRUE(kv.can_grow(20, 12));
  EXPECT_EQ(cache.evict_until_fits(20, 12), 0);  // fits already: nothing more goes

  // More than the pool: every prefix goes, and still it does not fit.
  EXPECT_EQ(cache.evict_until_fits(20, 40), 1);
  EXPECT_EQ(cache.size(), 0);
  EXPECT_FALSE(kv.can_grow(20, 40));
}

TEST(PrefixCache, ReleaseFreesTheKeptBlocks) {
  KvCacheManager kv(config_of(8));
  PrefixCache cache(kv);
  keep_sequence(kv, cache, 1, 10, {1, 2, 3, 4, 5});
  keep_sequence(kv, cache, 2, 11, {6, 7, 8, 9, 10});
  ASSERT_EQ(kv.usage(0).n_free, 4);
  cache.release(3);  // kept nothing: nothing happens
  cache.release(1);
  EXPECT_FALSE(kv.has_sequence(10));
  EXPECT_EQ(kv.usage(0).n_free, 6);
  cache.release_all();
  EXPECT_EQ(cache.size(), 0);
  EXPECT_EQ(kv.usage(0).n_free, 8);
}

}  // namespace
}  // namespace kvscope
