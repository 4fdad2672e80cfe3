#include "plan/kv_footprint.h"

#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kv/kv_cache_manager.h"
#include "util/error.h"

namespace kvscope {
namespace {

ModelSpec llama_7b() {
  ModelSpec s;
  s.architecture = "llama";
  s.n_layers = 32;
  s.dim = 4096;
  s.n_heads = 32;
  s.n_kv_heads = 32;
  s.head_dim = 128;
  s.rope_dim = 128;
  s.ffn_dim = 11008;
  s.vocab_size = 32000;
  s.context_length = 2048;
  return s;
}

TEST(KvFootprint, Llama7bFp16Batch1At2048TokensIsExactlyOneGiB) {
  const KvCacheConfig c = default_kv_config(llama_7b(), KvDtype::F16, KvDtype::F16);
  // 2 (K, V) x 32 layers x 32 KV heads x 128 head_dim x 2 bytes = 524,288 bytes per token.
  EXPECT_EQ(kv_bytes_per_token(c), 524'288);
  const KvFootprint f = kv_footprint(c, 1, 2048, 512);
  EXPECT_EQ(f.held_bytes, 1'073'741'824);
  EXPECT_EQ(f.pool_bytes_needed, 1'073'741'824);
  EXPECT_EQ(f.blocks_per_group_needed, 128);  // 2048 / 16
}

TEST(KvFootprint, PartialTailBlockIsAllocatedWhole) {
  const KvCacheConfig c = default_kv_config(llama_7b(), KvDtype::F16, KvDtype::F16);
  const std::int64_t block = 16 * 524'288;
  EXPECT_EQ(kv_footprint(c, 1, 2049, 1).held_bytes, 129 * block);
  EXPECT_EQ(kv_footprint(c, 3, 1, 1).held_bytes, 3 * block);
  EXPECT_EQ(kv_footprint(c, 2, 0, 1).held_bytes, 0);
}

TEST(KvFootprint, SeparateKAndVDtypesAddTheirOwnBytes) {
  KvCacheConfig c = default_kv_config(llama_7b(), KvDtype::Int8, KvDtype::F16);
  // K int8: 128 B data + 4 fp16 scales = 136 B per vector; V f16: 256 B. x 32 heads x 32 layers.
  EXPECT_EQ(kv_bytes_per_token(c), 32 * 32 * (136 + 256));
  c.groups[0].v_dtype = KvDtype::Int4;  // 64 B + 4 scales x 2 B = 72 B
  EXPECT_EQ(kv_bytes_per_token(c), 32 * 32 * (136 + 72));
}

TEST(KvFootprint, Int4KeysAddTheOffsetsOfEveryBlock) {
  KvCacheConfig c = default_kv_config(llama_7b(), KvDtype::Int4, KvDtype::Int4);
  // per layer: 16 slots x 32 heads x (K 64 + 16 x 2, V 64 + 4 x 2) + 32 heads x 128 x 2 offsets
  const std::int64_t block = 32 * (16 * 32 * (96 + 72) + 32 * 128 * 2);
  EXPECT_EQ(kv_block_set_bytes(c), block);
  EXPECT_EQ(kv_bytes_per_token(c), 32.0 * 32 * 184);  // 184 B per token, layer and KV head
  EXPECT_EQ(kv_footprint(c, 1, 2049, 1).held_bytes, 129 * block);
  // attention at 100 tokens reads 100 keys and values and the offsets of 7 blocks
  EXPECT_EQ(kv_bytes_read_per_token(c, 100), 32 * (100 * 32 * 168 + 7 * 32 * 128 * 2));
  // blocks of 3: the offsets are a third of a block's per token, a fractional figure
  c.block_size = 3;
  EXPECT_DOUBLE_EQ(kv_bytes_per_token(c), 32.0 * (32 * 168 + 32 * 128 * 2 / 3.0));
}

TEST(KvFootprint, SlidingWindowPeakMatchesHandCount) {
  ModelSpec s = llama_7b();
  s.n_kv_heads = 8;
  s.sliding_window = 4096;  // Mistral-7B-v0.1
  s.context_length = 32768;
  const KvCacheConfig c = default_kv_config(s, KvDtype::F16, KvDtype::F16);
  // Token by token: 4096 visible keys span 256 blocks, 257 while the oldest one is only
  // partly outside the window.
  EXPECT_EQ(kv_peak_blocks(c, 0, 32768, 1), 257);
  // The last grow starts at 32767: blocks before key 32767 - 4095 = 28672 (1792) released.
  EXPECT_EQ(kv_blocks_held(c, 0, 32768, 1), 2048 - 1792);
  // In steps of 512 the grow from T keeps keys from T - 4095 and appends 512 more:
  // (T + 512) / 16 - floor((T - 4095) / 16) = 288 blocks once T >= 4608.
  EXPECT_EQ(kv_peak_blocks(c, 0, 32768, 512), 288);
  // Before the window starts releasing, the count is just ceil(tokens / 16).
  EXPECT_EQ(kv_peak_blocks(c, 0, 1000, 512), 63);
}

TEST(KvFootprint, AttentionReadsOnlyTheVisibleKeys) {
  ModelSpec s = llama_7b();
  s.sliding_window = 100;
  const KvCacheConfig c = default_kv_config(s, KvDtype::F16, KvDtype::F16);
  EXPECT_EQ(kv_bytes_read_per_token(c, 10), 10 * 524'288);
  EXPECT_EQ(kv_bytes_read_per_token(c, 5000), 100 * 524'288);
}

TEST(KvFootprint, RejectsBadArguments) {
  const KvCacheConfig c = default_kv_config(llama_7b(), KvDtype::F16, KvDtype::F16);
  EXPECT_THROW(kv_blocks_held(c, 1, 10, 1), UsageError);
  EXPECT_THROW(kv_peak_blocks(c, 0, 10, 0), UsageError);
  EXPECT_THROW(kv_peak_blocks(c, 0, -1, 1), UsageError);
  EXPECT_THROW(kv_footprint(c, -1, 10, 1), UsageError);
}

// --- the planner against the allocator ------------------------------------------------

struct Shape {
  std::int64_t n_kv_heads;
  std::int64_t head_dim;
};

// Layer groups of a 4-layer model: full, windowed, and mixes with different dtypes.
std::vector<std::vector<LayerGroupConfig>> group_layouts(KvDtype k, KvDtype v) {
  return {
      {{{0, 1, 2, 3}, k, v, 0}},
      {{{0, 1, 2, 3}, k, v, 5}},
      {{{0, 2}, k, v, 0}, {{1, 3}, KvDtype::F16, KvDtype::Int4, 37}},
      {{{3}, v, k, 16}, {{1, 2}, k, v, 0}, {{0}, KvDtype::Int8, KvDtype::Int8, 1}},
  };
}

// Grows `batch` sequences in lockstep to `tokens` in steps of `step` and returns the most
// blocks each group had in use at once.
std::vector<std::int64_t> grow_all(KvCacheManager& m, std::int64_t batch, std::int64_t tokens,
                                   std::int64_t step) {
  std::vector<std::int64_t> peak(static_cast<std::size_t>(m.n_groups()), 0);
  for (SeqId s = 0; s < batch; ++s) m.add_sequence(s);
  for (std::int64_t t = 0; t < tokens; t += step) {
    for (SeqId s = 0; s < batch; ++s) {
      m.grow(s, std::min(step, tokens - t));
      for (std::int64_t g = 0; g < m.n_groups(); ++g) {
        peak[static_cast<std::size_t>(g)] =
            std::max(peak[static_cast<std::size_t>(g)], m.usage(g).n_used);
      }
    }
  }
  return peak;
}

void check_against_allocator(KvCacheConfig c, std::int64_t batch, std::int64_t tokens,
                             std::int64_t step) {
  const KvFootprint f = kv_footprint(c, batch, tokens, step);
  SCOPED_TRACE(::testing::Message() << "batch " << batch << " tokens " << tokens << " step " << step
                                    << " needs " << f.blocks_per_group_needed);
  c.n_blocks = f.blocks_per_group_needed + 3;
  {
    KvCacheManager m(c);
    const std::vector<std::int64_t> peak = grow_all(m, batch, tokens, step);
    std::int64_t held_bytes = 0;
    for (std::int64_t g = 0; g < m.n_groups(); ++g) {
      const KvGroupFootprint& gf = f.groups[static_cast<std::size_t>(g)];
      ASSERT_EQ(gf.block_bytes, m.layout(g).block_bytes()) << "group " << g;
      ASSERT_EQ(gf.held_blocks, m.usage(g).n_used) << "group " << g;
      ASSERT_EQ(gf.peak_blocks, peak[static_cast<std::size_t>(g)]) << "group " << g;
      held_bytes += m.usage(g).n_used * m.layout(g).block_bytes();
    }
    ASSERT_EQ(f.held_bytes, held_bytes);
  }
  // A pool of exactly the planned size is enough; one block fewer per group is not.
  c.n_blocks = f.blocks_per_group_needed;
  KvCacheManager exact(c);
  EXPECT_NO_THROW(grow_all(exact, batch, tokens, step));
  c.n_blocks = f.blocks_per_group_needed - 1;
  if (c.n_blocks == 0) return;
  KvCacheManager short_one(c);
  EXPECT_THROW(grow_all(short_one, batch, tokens, step), CapacityError);
}

TEST(KvFootprint, EqualsWhatKvCacheManagerAllocatesAcrossShapesDtypesBlockSizesAndGroups) {
  const std::vector<Shape> shapes = {{32, 128}, {8, 128}, {4, 8}, {3, 64}, {1, 256}, {5, 40}};
  const std::vector<std::pair<KvDtype, KvDtype>> dtypes = {{KvDtype::F16, KvDtype::F16},
                                                           {KvDtype::Int8, KvDtype::Int8},
                                                           {KvDtype::Int4, KvDtype::Int4},
                                                           {KvDtype::Int8, KvDtype::Int4}};
  int cases = 0;
  for (const Shape& shape : shapes) {
    for (const auto& [k, v] : dtypes) {
      for (const std::int64_t block_size : {1, 3, 16, 64}) {
        for (const auto& groups : group_layouts(k, v)) {
          KvCacheConfig c;
          c.groups = groups;
          c.n_kv_heads = shape.n_kv_heads;
          c.head_dim = shape.head_dim;
          c.block_size = block_size;
          c.max_context = 1000;
          c.host_storage = false;
          SCOPED_TRACE(::testing::Message()
                       << "heads " << shape.n_kv_heads << " head_dim " << shape.head_dim << " k "
                       << kv_dtype_name(k) << " v " << kv_dtype_name(v) << " block " << block_size
                       << " groups " << groups.size() << " window " << groups[0].window);
          for (const std::int64_t tokens : {std::int64_t{1}, block_size, block_size + 1,
                                            std::int64_t{100}, std::int64_t{257}}) {
            for (const std::int64_t step : {1, 7}) {
              check_against_allocator(c, 2, tokens, step);
              if (HasFatalFailure()) return;
              ++cases;
            }
          }
        }
      }
    }
  }
  EXPECT_EQ(cases, 6 * 4 * 4 * 4 * 5 * 2);
}

TEST(KvFootprint, PoolSizedFromThePlannedBudgetHoldsThePlannedBlocks) {
  KvCacheConfig c;
  c.groups = group_layouts(KvDtype::Int8, KvDtype::F16)[2];
  c.n_kv_heads = 4;
  c.head_dim = 8;
  c.block_size = 16;
  c.max_context = 512;
  const KvFootprint f = kv_footprint(c, 3, 300, 16);
  c.budget_bytes = f.pool_bytes_needed;
  EXPECT_EQ(kv_blocks_per_group(c), f.blocks_per_group_needed);
  c.budget_bytes = f.pool_bytes_needed - 1;
  EXPECT_EQ(kv_blocks_per_group(c), f.blocks_per_group_needed - 1);
}

}  // namespace
}  // namespace kvscope
