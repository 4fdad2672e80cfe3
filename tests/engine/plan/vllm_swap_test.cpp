// vLLM's --swap-space per release (engine/plan/vllm_swap.h): none for V1, which never swaps;
// for V0 the KV of the sequences vLLM's own pool cannot hold, written only past vLLM's
// default 4 GiB, and only for sequences of requests of several (n > 1, beam search). The
// server is issue #41's: Llama-3.1-8B on an RTX 3090 at 0.90 (vllm issue 10517), where the
// first rule wrote every sequence's whole context (256 x 20,000 tokens: --swap-space 625).
#include <cstdint>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "engine/plan/preset_files.h"
#include "plan/vllm_memory.h"
#include "plan/vllm_swap.h"
#include "util/error.h"

namespace kvscope {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr std::int64_t kGiB = std::int64_t{1} << 30;
// Llama-3.1-8B's block: 16 tokens x 32 layers x 2 (K, V) x 8 KV heads x 128 x 2 B = 2 MiB.
constexpr std::int64_t kBlockBytes = std::int64_t{16} * 32 * 2 * 8 * 128 * 2;

VllmMemoryPlan llama31_on_3090(VllmVersion version, std::int64_t max_model_len,
                               std::int64_t max_num_seqs) {
  VllmRequest r;
  r.spec = find_model_preset(test::model_presets(), "llama-3.1-8b").spec;
  r.version = version;
  r.total_gpu_memory = reported_gpu_memory(24 * kGiB);
  r.gpu_memory_utilization = 0.90;
  r.max_model_len = max_model_len;
  r.max_num_seqs = max_num_seqs;
  return plan_vllm_memory(r);
}

TEST(VllmSwap, SwapSpaceRoundsUpToWholeGiB) {
  EXPECT_EQ(swap_space_gib(0), 0);
  EXPECT_EQ(swap_space_gib(1), 1);
  EXPECT_EQ(swap_space_gib(kGiB), 1);
  EXPECT_EQ(swap_space_gib(kGiB + 1), 2);
  EXPECT_EQ(swap_space_gib(5 * kGiB / 4), 2);
}

TEST(VllmSwap, AV1ReleaseNeverSwapsSoTheCommandHasNoSwapSpace) {
  for (const VllmVersion v : {VllmVersion::V1_0_10, VllmVersion::V1_0_26}) {
    const VllmMemoryPlan plan = llama31_on_3090(v, 20000, 256);
    const VllmSwap swap = plan_vllm_swap(plan);
    EXPECT_FALSE(swap.engine_swaps);
    EXPECT_FALSE(swap.swap_space_gib.has_value());
    EXPECT_EQ(swap.bytes_needed, 0);
    const std::string text = explain_vllm_swap(plan, swap);
    EXPECT_THAT(text, HasSubstr("no --swap-space"));
    EXPECT_THAT(text, HasSubstr("never swaps"));
  }
}

TEST(VllmSwap, AV0PoolThatHoldsEverySequenceKeepsVllmsDefault) {
  // 8 sequences of 4,096 tokens: 256 blocks each, well within the pool.
  const VllmMemoryPlan plan = llama31_on_3090(VllmVersion::V0_6_4, 4096, 8);
  ASSERT_GE(plan.gpu_blocks, 8 * 256);
  const VllmSwap swap = plan_vllm_swap(plan);
  EXPECT_TRUE(swap.engine_swaps);
  EXPECT_EQ(swap.blocks_per_sequence, 256);
  EXPECT_EQ(swap.resident_sequences, plan.gpu_blocks / 256);
  EXPECT_EQ(swap.swapped_sequences, 0);
  EXPECT_EQ(swap.bytes_needed, 0);
  EXPECT_FALSE(swap.swap_space_gib.has_value());
  EXPECT_THAT(explain_vllm_swap(plan, swap), HasSubstr("vLLM's default 4 GiB per GPU"));
}

// The server, as `vllm serve` is used: every request one sequence (the OpenAI API's
// n = 1), recomputed when preempted, so vLLM's default stays, and the text says what requests
// of several sequences would need. The old default sized every sequence (--swap-space 623,
// which vLLM refuses on any host under 890 GiB).
TEST(VllmSwap, AV0PoolThatOverflowsKeepsTheDefaultWhenRequestsAreOneSequence) {
  const VllmMemoryPlan plan = llama31_on_3090(VllmVersion::V0_6_4, 20000, 256);
  const VllmSwap swap = plan_vllm_swap(plan);
  EXPECT_TRUE(swap.engine_swaps);
  EXPECT_EQ(swap.resident_sequences, 1);
  EXPECT_EQ(swap.overflow_sequences, 255);
  EXPECT_EQ(swap.swapped_sequences, 0);
  EXPECT_EQ(swap.bytes_needed, 0);
  EXPECT_FALSE(swap.swap_space_gib.has_value());
  const std::string text = explain_vllm_swap(plan, swap);
  EXPECT_THAT(text, HasSubstr("vLLM's default 4 GiB per GPU"));
  EXPECT_THAT(text, HasSubstr("recomputed"));
  EXPECT_THAT(text, HasSubstr("up to 255 such sequences of 20,000 tokens"));
  EXPECT_THAT(text, Not(HasSubstr("--swap-space")));
}

TEST(VllmSwap, AV0PoolThatOverflowsNeedsOnlyTheSequencesItCannotHold) {
  // 256 x 20,000 tokens on a pool of 1,957 blocks: 1,250 blocks a sequence, so one sequence
  // stays on the GPU and, were every request of several sequences, 255 may be swapped out:
  // 255 x 1,250 x 2 MiB = 622.6 GiB (the first rule counted all 256: 625 GiB).
  const VllmMemoryPlan plan = llama31_on_3090(VllmVersion::V0_6_4, 20000, 256);
  ASSERT_EQ(plan.block_bytes, kBlockBytes);
  ASSERT_GE(plan.gpu_blocks, 1250);
  ASSERT_LT(plan.gpu_blocks, 2 * 1250);
  const VllmSwap swap = plan_vllm_swap(plan, 256);
  EXPECT_EQ(swap.blocks_per_sequence, 1250);
  EXPECT_EQ(swap.resident_sequences, 1);
  EXPECT_EQ(swap.swapped_sequences, 255);
  EXPECT_EQ(swap.bytes_needed, 255 * 1250 * kBlockBytes);
  EXPECT_EQ(swap.swap_space_gib, std::optional<std::int64_t>(623));
  // vLLM refuses a swap space above 70% of the host's memory: 623 GiB / 0.7 = 890 GiB.
  EXPECT_NEAR(static_cast<double>(swap.host_bytes_needed) / static_cast<double>(kGiB), 890.0, 0.01);
  const std::string text = explain_vllm_swap(plan, swap);
  EXPECT_THAT(text, HasSubstr("255 sequences of 20,000 tokens"));
  EXPECT_THAT(text, HasSubstr("(--swap-space 623)"));
  EXPECT_THAT(text, HasSubstr("requests of one are recomputed"));
}

TEST(VllmSwap, AV0CapOnTheSwappingSequencesBoundsTheFigure) {
  const VllmMemoryPlan plan = llama31_on_3090(VllmVersion::V0_7, 20000, 256);
  // 3 sequences: 3 x 1,250 x 2 MiB = 7.3 GiB -> 8
  EXPECT_EQ(plan_vllm_swap(plan, 3).swap_space_gib, std::optional<std::int64_t>(8));
  // 1 sequence: 2.4 GiB, within the default
  const VllmSwap one = plan_vllm_swap(plan, 1);
  EXPECT_EQ(one.bytes_needed, 1250 * kBlockBytes);
  EXPECT_FALSE(one.swap_space_gib.has_value());
  EXPECT_THAT(explain_vllm_swap(plan, one), HasSubstr("within vLLM's default 4 GiB"));
  // none (every request one sequence: recomputed, never swapped)
  const VllmSwap none = plan_vllm_swap(plan, 0);
  EXPECT_EQ(none.bytes_needed, 0);
  EXPECT_FALSE(none.swap_space_gib.has_value());
  EXPECT_THAT(explain_vllm_swap(plan, none), Not(HasSubstr("--swap-space")));
  EXPECT_THROW(plan_vllm_swap(plan, -1), UsageError);
}

TEST(VllmSwap, UnderTensorParallelEachGpuSwapsItsShareOfTheKvHeads) {
  VllmRequest r;
  r.spec = find_model_preset(test::model_presets(), "llama-3.1-8b").spec;
  r.version = VllmVersion::V0_6_4;
  r.total_gpu_memory = reported_gpu_memory(24 * kGiB);
  r.tp = 2;
  r.max_model_len = 20000;
  r.max_num_seqs = 256;
  const VllmMemoryPlan plan = plan_vllm_memory(r);
  ASSERT_EQ(plan.block_bytes, kBlockBytes / 2);  // 4 KV heads per GPU
  const VllmSwap swap = plan_vllm_swap(plan, 256);
  EXPECT_EQ(swap.bytes_needed, swap.swapped_sequences * 1250 * (kBlockBytes / 2));
  EXPECT_EQ(swap.swapped_sequences, 256 - plan.gpu_blocks / 1250);
}

}  // namespace
}  // namespace kvscope
