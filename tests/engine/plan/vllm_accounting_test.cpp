// The planner against vLLM's own accounting of its KV cache, from real startup logs.
//
// Source: https://github.com/vllm-project/vllm/issues/10517 (comment of 2024-12-02):
// meta-llama/Llama-3.1-8B-Instruct (the llama-3.1-8b preset's shape) on one RTX 3090, vLLM
// 0.6.x, bf16 weights, fp16/bf16 KV, blocks of 16, gpu_memory_utilization 0.90:
//   max_model_len 20000: total_gpu_memory=23.58GiB, "Loading model weights took 14.9888 GB",
//     peak_torch_memory=17.06GiB non_torch_memory=0.35GiB kv_cache_size=3.81GiB,
//     "# GPU blocks: 1952", "Maximum concurrency for 20000 tokens per request: 1.56x"
//   max_model_len 29000: peak_torch_memory=17.98GiB kv_cache_size=2.89GiB,
//     "# GPU blocks: 1478", "... maximum number of tokens that can be stored in KV cache
//     (23648)"
// vLLM sizes the pool as total x utilisation - peak_torch - non_torch, where the peak is
// measured by a profile run of one max_model_len-token prefill (no chunked prefill in that
// version) on top of the weights. The planner's formula is total x utilisation - weights -
// workspace with KVScope's own workspace (512-token prefill chunks, f32 activations, the
// CUDA context), so the KV bytes per block must agree exactly and the capacity only as far
// as the two workspaces do.
#include <cmath>
#include <cstdint>

#include <gtest/gtest.h>

#include "engine/plan/preset_files.h"
#include "plan/parallel_plan.h"

namespace kvscope {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

ParallelRequest llama31_8b_on(std::int64_t total_bytes, std::int64_t max_model_len) {
  const ModelPreset& p = find_model_preset(test::model_presets(), "llama-3.1-8b");
  ParallelRequest r;
  r.base = make_plan_request(p.spec, preset_weights(p.spec, p.n_params, WeightType::F16),
                             KvDtype::F16, KvDtype::F16);
  r.base.budget.total_bytes = total_bytes;
  r.base.budget.utilisation = 0.90;
  r.base.context = max_model_len;
  r.n_params = p.n_params;
  return r;
}

// Blocks the planner's pool gets for a KV budget of `gib` GiB.
std::int64_t blocks_for(double gib) {
  ParallelRequest r = llama31_8b_on(24LL << 30, 20000);
  r.base.kv_budget_bytes = static_cast<std::int64_t>(gib * kGiB);
  return plan_parallel(r).kv_blocks;
}

struct VllmLog {
  std::int64_t max_model_len;
  double peak_torch_gib;  // weights + the profile run's activation peak
  double kv_cache_gib;    // as logged, to 2 decimals
  std::int64_t gpu_blocks;
  double max_ratio;  // the planner's capacity / vLLM's stays within [1, max_ratio]
};

constexpr double kTotalGib = 23.58;        // total_gpu_memory as torch saw it
constexpr double kWeightsGib = 14.9888;    // "Loading model weights took 14.9888 GB" (GiB)
constexpr double kNonTorchGib = 0.35;      // CUDA context, NCCL, cuBLAS
constexpr double kBytesPerToken = 131072;  // 32 layers x 2 x 8 KV heads x 128 x 2 B
constexpr VllmLog kLogs[] = {{20000, 17.06, 3.81, 1952, 1.5}, {29000, 17.98, 2.89, 1478, 2.0}};

TEST(VllmAccounting, KvBytesPerBlockAreVllmsForLlama31On3090) {
  // vLLM's kv_cache_size is printed to 0.01 GiB, so its blocks lie between the planner's
  // for the two ends of that rounding: exact agreement of the bytes per block (2 MiB:
  // 16 tokens x 32 layers x 8 KV heads x 2 x 128 x 2 B) up to the log's precision.
  for (const VllmLog& log : kLogs) {
    EXPECT_LE(blocks_for(log.kv_cache_gib - 0.005), log.gpu_blocks) << log.max_model_len;
    EXPECT_GE(blocks_for(log.kv_cache_gib + 0.005), log.gpu_blocks) << log.max_model_len;
  }
  // "Maximum concurrency for 20000 tokens per request: 1.56x" = 1952 x 16 / 20000
  EXPECT_EQ(std::lround(1952.0 * 16 / 20000 * 100), 156);
}

// How close, and why. On the GPU's own 23.58 GiB at utilisation 0.90 the planner gives
// Llama-3.1-8B 45,072 tokens of KV (KV budget 5.50 GiB) against vLLM's 31,232 (3.81 GiB) at
// max_model_len 20000, 1.44x, and 23,648 (2.89 GiB) at 29000, 1.91x. The whole gap is the
// memory besides weights and KV: vLLM's profile run prefills max_model_len tokens at once
// (peak_torch - weights = 2.07 / 2.99 GiB) and counts 0.35 GiB of non-torch memory, where
// KVScope's workspace (512-token chunks, CUDA context) is 0.76 GiB; weights differ by 0.03
// GiB. This test checks that decomposition to the logs' rounding (<= 0.02 GiB, 160 tokens,
// plus one block), and states the capacity ratio band for each case.
TEST(VllmAccounting, CapacityDiffersFromVllmsByTheWorkspaceGapAlone) {
  for (const VllmLog& log : kLogs) {
    const ParallelPlan p = plan_parallel(
        llama31_8b_on(static_cast<std::int64_t>(kTotalGib * kGiB), log.max_model_len));
    const MemoryPlan& m = p.stages[0].plan;
    const double vllm_tokens = static_cast<double>(log.gpu_blocks * 16);
    const double vllm_other_gib = log.peak_torch_gib - kWeightsGib + kNonTorchGib;
    const double gap_gib = vllm_other_gib - static_cast<double>(m.workspace.total()) / kGiB -
                           (static_cast<double>(m.weights.bytes) / kGiB - kWeightsGib);
    const double predicted = vllm_tokens + gap_gib * kGiB / kBytesPerToken;
    EXPECT_NEAR(static_cast<double>(p.kv_tokens), predicted, 160 + 16) << log.max_model_len;
    const double ratio = static_cast<double>(p.kv_tokens) / vllm_tokens;
    EXPECT_GE(ratio, 1.0) << log.max_model_len;
    EXPECT_LE(ratio, log.max_ratio) << log.max_model_len;
  }
}

}  // namespace
}  // namespace kvscope
