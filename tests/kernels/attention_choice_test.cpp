// The attention kernel choice on the host: the generic kernel's head tiles against a device's
// shared memory limit (its launch used to ask for 4 group (2 head_dim + block_size + 3) bytes
// whatever the device allowed: 32 query heads per KV head at head_dim 256 need 66 KiB, over
// sm_75's 64), and the choice in the words `bench` and `devices` print. No device needed.
#include <cstddef>
#include <cstdint>
#include <string>

#include <gtest/gtest.h>

#include "attention/paged_attention_choice.cuh"
#include "kv/format/kv_block_layout.h"

namespace kvscope {
namespace {

using cuda::AttentionKernel;

constexpr std::size_t kKiB = 1024;
// Opt-in shared memory per CTA: sm_70 / sm_75, sm_86 / sm_89, sm_80, sm_90.
constexpr std::size_t kLimits[] = {48 * kKiB, 64 * kKiB, 99 * kKiB, 163 * kKiB, 227 * kKiB};

TEST(GenericAttentionTiling, SharedMemoryIsQAccScoresAndThreeFloatsPerHead) {
  EXPECT_EQ(cuda::generic_attention_smem_bytes(1, 128, 16), 4u * (256 + 16 + 3));
  EXPECT_EQ(cuda::generic_attention_smem_bytes(8, 80, 32), 4u * 8 * (160 + 32 + 3));
  EXPECT_EQ(cuda::generic_attention_smem_bytes(32, 256, 16), 67968u);  // > 64 KiB
}

TEST(GenericAttentionTiling, TilesAreAsFewAsFitTheLimitAndAsEvenAsCanBe) {
  for (const int head_dim : {8, 32, 64, 80, 96, 112, 128, 160, 192, 256}) {
    for (const int group : {1, 2, 3, 4, 5, 7, 8, 12, 16, 32, 48, 64, 71, 128}) {
      for (const int block_size : {1, 8, 16, 32, 128, 256, 1024}) {
        for (const std::size_t limit : kLimits) {
          const auto t = cuda::generic_attention_tiling(group, head_dim, block_size, limit);
          const std::size_t per_head = cuda::generic_attention_smem_bytes(1, head_dim, block_size);
          const std::string what = "group " + std::to_string(group) + ", head_dim " +
                                   std::to_string(head_dim) + ", block " +
                                   std::to_string(block_size) + ", limit " + std::to_string(limit);
          if (per_head > limit) {
            EXPECT_EQ(t.tile_heads, 0) << what;
            continue;
          }
          const auto fit = static_cast<int>(std::min<std::size_t>(limit / per_head, group));
          ASSERT_GE(t.tile_heads, 1) << what;
          EXPECT_LE(t.tile_heads, fit) << what;
          EXPECT_EQ(t.smem_bytes,
                    cuda::generic_attention_smem_bytes(t.tile_heads, head_dim, block_size))
              << what;
          EXPECT_LE(t.smem_bytes, limit) << what;
          EXPECT_EQ(t.n_tiles, (group + fit - 1) / fit) << what << ": as few tiles as fit";
          EXPECT_GE(t.n_tiles * t.tile_heads, group) << what << ": every head in a tile";
          EXPECT_LT((t.n_tiles - 1) * t.tile_heads, group) << what << ": no empty tile";
        }
      }
    }
  }
}

TEST(GenericAttentionTiling, ExamplesFromRealShapes) {
  // Llama 3 70B (64 heads over 8 KV heads, head_dim 128): one tile everywhere
  auto t = cuda::generic_attention_tiling(8, 128, 16, 48 * kKiB);
  EXPECT_EQ(t.n_tiles, 1);
  EXPECT_EQ(t.tile_heads, 8);
  // 32 heads over one KV head at head_dim 256: 66.4 KiB, two tiles of 16 on a 64 KiB sm_75,
  // one on sm_89
  t = cuda::generic_attention_tiling(32, 256, 16, 64 * kKiB);
  EXPECT_EQ(t.n_tiles, 2);
  EXPECT_EQ(t.tile_heads, 16);
  EXPECT_EQ(cuda::generic_attention_tiling(32, 256, 16, 99 * kKiB).n_tiles, 1);
  // 71 heads over one KV head at head_dim 256 on 48 KiB: 23 fit, so 4 tiles of 18 (the last 17)
  t = cuda::generic_attention_tiling(71, 256, 16, 48 * kKiB);
  EXPECT_EQ(t.n_tiles, 4);
  EXPECT_EQ(t.tile_heads, 18);
  // blocks of 16384 tokens: 64 KiB of scores for one head is more than any device has
  EXPECT_EQ(cuda::generic_attention_tiling(1, 128, 16384, 64 * kKiB).tile_heads, 0);
}

cuda::KvLayerLayout layout(KvDtype kd, KvDtype vd, int head_dim, int n_kv_heads, int block_size) {
  return cuda::kv_layer_layout(KvBlockLayout::make(kd, vd, 2, n_kv_heads, head_dim, block_size), 1);
}

TEST(AttentionChoice, HeadDims80112And160RunTheGenericKernelAndSayWhy) {
  for (const int head_dim : {80, 112, 160}) {
    const auto c =
        cuda::attention_choice(layout(KvDtype::F16, KvDtype::F16, head_dim, 8, 16), 32, 99 * kKiB);
    EXPECT_EQ(c.kernel, AttentionKernel::Generic) << head_dim;
    EXPECT_EQ(c.why_generic, "head_dim is not 64, 96, 128 or 256") << head_dim;
    const std::string line = cuda::describe_attention_choice(c, 99 * kKiB);
    EXPECT_EQ(line.rfind("generic kernel (head_dim is not 64, 96, 128 or 256), 4 query heads "
                         "per CTA in 1 tile, ",
                         0),
              0u)
        << line;
  }
}

TEST(AttentionChoice, SupportedLayoutsRunTheFastKernelUnlessTheEnvironmentSaysGeneric) {
  for (const KvDtype d : {KvDtype::F16, KvDtype::Int8, KvDtype::Int4}) {
    for (const int head_dim : {64, 96, 128, 256}) {
      const cuda::KvLayerLayout L = layout(d, d, head_dim, 2, 16);
      const auto c = cuda::attention_choice(L, 16, 99 * kKiB);
      EXPECT_EQ(c.kernel, AttentionKernel::Fast) << head_dim << " " << c.why_generic;
      EXPECT_EQ(cuda::describe_attention_choice(c, 99 * kKiB), "fast kernel");
      const auto forced = cuda::attention_choice(L, 16, 99 * kKiB, /*generic_forced=*/true);
      EXPECT_EQ(forced.kernel, AttentionKernel::Generic);
      EXPECT_EQ(forced.why_generic, "KVSCOPE_ATTENTION_KERNEL=generic");
    }
  }
}

// A group keeping an exact tail (kv/exact_tail.h) runs the generic kernel, which reads the
// fp16 copies, and the line says why.
TEST(AttentionChoice, AGroupWithAnExactTailRunsTheGenericKernel) {
  for (const KvDtype d : {KvDtype::Int8, KvDtype::Int4}) {
    const cuda::KvLayerLayout L = layout(d, d, 64, 2, 16);
    EXPECT_EQ(cuda::attention_choice(L, 6, 99 * kKiB).kernel, AttentionKernel::Fast);
    const auto c = cuda::attention_choice(L, 6, 99 * kKiB, false, /*exact_tail=*/true);
    EXPECT_EQ(c.kernel, AttentionKernel::Generic);
    const std::string line = cuda::describe_attention_choice(c, 99 * kKiB);
    EXPECT_TRUE(line.starts_with("generic kernel (the exact tail's fp16 copies are read)")) << line;
  }
}

TEST(AttentionChoice, AGroupOverTheLimitIsTiledAndOneThatCannotFitSaysSo) {
  const cuda::KvLayerLayout L = layout(KvDtype::F16, KvDtype::F16, 80, 1, 16);
  const auto c = cuda::attention_choice(L, 128, 48 * kKiB);  // 716 bytes a head: 68 fit
  EXPECT_EQ(c.kernel, AttentionKernel::Generic);
  EXPECT_EQ(c.tiling.n_tiles, 2);
  EXPECT_NE(cuda::describe_attention_choice(c, 48 * kKiB).find(" in 2 tiles, "), std::string::npos);
  const auto none = cuda::attention_choice(L, 4, 512);
  EXPECT_EQ(none.tiling.tile_heads, 0);
  EXPECT_NE(cuda::describe_attention_choice(none, 512).find("cannot run"), std::string::npos);
}

}  // namespace
}  // namespace kvscope
