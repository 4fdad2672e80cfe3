#include "plan/memory_model.h"

#include <gtest/gtest.h>

#include "engine/plan/preset_files.h"
#include "util/error.h"

namespace kvscope {
namespace {

constexpr std::int64_t kGiB = std::int64_t{1} << 30;

PlanRequest llama2_7b(WeightType weights, KvDtype kv) {
  const ModelPreset& p = find_model_preset(test::model_presets(), "llama-2-7b");
  return make_plan_request(p.spec, preset_weights(p.spec, p.n_params, weights), kv, kv);
}

TEST(MemoryModel, WorkspaceIsActivationsLogitsAndTheBackendOverhead) {
  const ModelSpec& s = find_model_preset(test::model_presets(), "llama-2-7b").spec;
  // CPU: 512 tokens x 4 B x (3 x 4096 + 2 x 4096 + 2 x 4096 + 2 x 11008 + 128).
  const Workspace cpu = workspace_for(s, 1, 512, PlanBackend::Cpu);
  EXPECT_EQ(cpu.step_tokens, 512);
  EXPECT_EQ(cpu.activations, 512 * 4 * 50'816);
  EXPECT_EQ(cpu.logits, 32'000 * 4);
  EXPECT_EQ(cpu.buffers, 0);
  EXPECT_EQ(cpu.backend, 0);
  // CUDA: the backend's own buffers (plan/cuda_workspace.h). At 512 tokens x 4 B: x, xb
  // 2 x 4096, q k v 12,288, attention 4096, gate and up 2 x 11,008 = 95,420,416 B; the final
  // hidden state 16,384; split partials of a decode token 12 splits x 32 heads x 130 x 4 =
  // 199,680; error sums 32 layers x 32 = 1,024; 8-bit codes of 7 tokens (below cuBLAS's 8)
  // 77,056 + their scales 9,632; cuBLAS fp16 inputs 512 x 11,008 x 2 = 11,272,192; step
  // tables (2 x 512 + 1 + 2 x 512 + 256 blocks) x 4 = 9,220; one greedy pick 4.
  const Workspace w = workspace_for(s, 1, 512, PlanBackend::Cuda);
  EXPECT_EQ(w.step_tokens, 512);
  EXPECT_EQ(w.activations,
            95'420'416 + 16'384 + 199'680 + 1'024 + 77'056 + 9'632 + 11'272'192 + 9'220 + 4);
  EXPECT_EQ(w.logits, 32'000 * 4);
  // RoPE tables 2 x 4096 x 64 x 4 B, cuBLAS workspace 32 MiB, a 64 MiB fp16 weight slab
  EXPECT_EQ(w.buffers, 2'097'152 + 33'554'432 + 67'108'864);
  EXPECT_EQ(w.backend, 512LL << 20);
  EXPECT_EQ(w.total(), 107'005'608 + 128'000 + 102'760'448 + 536'870'912);
  // Decoding 1000 sequences is 1000 tokens a step, more than a prefill chunk.
  const Workspace big = workspace_for(s, 1000, 512, PlanBackend::Cpu);
  EXPECT_EQ(big.step_tokens, 1000);
  EXPECT_EQ(big.logits, 1000 * 32'000 * 4);
  EXPECT_EQ(big.backend, 0);
}

TEST(MemoryModel, UsableMemoryIsTotalTimesUtilisationMinusOthers) {
  MemoryBudget b;
  b.total_bytes = 24 * kGiB;
  b.utilisation = 0.9;
  EXPECT_EQ(b.usable(), 23'192'823'398);  // floor(25,769,803,776 x 0.9)
  b.used_by_others = kGiB;
  EXPECT_EQ(b.usable(), 23'192'823'398 - kGiB);
}

TEST(MemoryModel, PlanAddsWeightsWorkspaceAndKvAgainstTheBudget) {
  PlanRequest r = llama2_7b(WeightType::Q4_K_M, KvDtype::F16);
  r.context = 4096;
  r.budget.total_bytes = 8 * kGiB;
  const MemoryPlan p = plan_memory(r);
  EXPECT_EQ(p.weights.bytes, 4'076'741'448);
  EXPECT_EQ(p.kv.pool_bytes_needed, 2 * kGiB);  // 4096 tokens x 524,288 B
  EXPECT_EQ(p.total_needed, 4'076'741'448 + 2 * kGiB + 746'764'968);
  EXPECT_EQ(p.usable_bytes, 7'730'941'132);  // floor(8 GiB x 0.9)
  EXPECT_EQ(p.margin_bytes, p.usable_bytes - p.total_needed);
  EXPECT_EQ(p.kv_budget_bytes, p.usable_bytes - 4'076'741'448 - 746'764'968);
  EXPECT_EQ(p.kv_block_set_bytes, 16 * 524'288);
  EXPECT_EQ(p.kv_blocks_per_group, p.kv_budget_bytes / (16 * 524'288));
  EXPECT_TRUE(p.within_context);
  EXPECT_TRUE(p.fits);
}

TEST(MemoryModel, FitsExactlyWhenTheKvBudgetHoldsTheLastBlock) {
  PlanRequest r = llama2_7b(WeightType::F16, KvDtype::F16);
  r.context = 100;  // 7 blocks of 16 tokens
  r.batch = 3;
  r.kv_budget_bytes = 21 * 16 * 524'288;
  MemoryPlan p = plan_memory(r);
  EXPECT_TRUE(p.fits);
  EXPECT_EQ(p.margin_bytes, 0);
  EXPECT_EQ(p.kv_blocks_per_group, 21);
  r.kv_budget_bytes -= 1;
  p = plan_memory(r);
  EXPECT_FALSE(p.fits);
  EXPECT_EQ(p.kv_blocks_per_group, 20);
  EXPECT_LT(p.margin_bytes, 0);
}

TEST(MemoryModel, AContextBeyondTheModelsDoesNotFit) {
  PlanRequest r = llama2_7b(WeightType::Q4_0, KvDtype::Int4);
  r.budget.total_bytes = 80 * kGiB;
  r.context = 4097;  // Llama 2 was trained for 4096
  const MemoryPlan p = plan_memory(r);
  EXPECT_FALSE(p.within_context);
  EXPECT_FALSE(p.fits);
  EXPECT_GT(p.margin_bytes, 0);
}

TEST(MemoryModel, WeightsLargerThanTheBudgetLeaveNoKvPool) {
  PlanRequest r = llama2_7b(WeightType::F16, KvDtype::F16);
  r.context = 16;
  r.budget.total_bytes = 8 * kGiB;
  const MemoryPlan p = plan_memory(r);
  EXPECT_EQ(p.kv_budget_bytes, 0);
  EXPECT_EQ(p.kv_blocks_per_group, 0);
  EXPECT_FALSE(p.fits);
}

TEST(MemoryModel, RejectsInvalidRequestsNamingTheField) {
  PlanRequest r = llama2_7b(WeightType::F16, KvDtype::F16);
  r.budget.total_bytes = 8 * kGiB;
  auto rejects = [&](PlanRequest bad) { EXPECT_THROW(plan_memory(bad), UsageError); };
  PlanRequest bad = r;
  bad.batch = 0;
  rejects(bad);
  bad = r;
  bad.context = 0;
  rejects(bad);
  bad = r;
  bad.budget.utilisation = 1.5;
  rejects(bad);
  bad = r;
  bad.budget.total_bytes = 0;
  rejects(bad);
  bad = r;
  bad.kv.block_size = 0;
  rejects(bad);
  bad = r;
  bad.kv.groups[0].layers.pop_back();
  bad.kv.groups[0].layers.push_back(0);  // layer 0 twice, layer 31 in no group
  rejects(bad);
}

}  // namespace
}  // namespace kvscope
