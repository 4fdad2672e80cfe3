#include "plan/parallel_explainer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "engine/plan/preset_files.h"
#include "plan/plan_explainer.h"
#include "plan/units.h"

namespace kvscope {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(PlanNeeds, Llama7bAt2048TokensNeedsOneGiBOfFp16Kv) {
  // "How much KV does LLaMA-7B take at 2,048 tokens?" 32 layers x 2 (K, V) x 4096 x 2 B x 2048
  const ModelPreset& p = find_model_preset(test::model_presets(), "llama-7b");
  PlanRequest r = make_plan_request(p.spec, preset_weights(p.spec, p.n_params, WeightType::F16),
                                    KvDtype::F16, KvDtype::F16);
  r.context = 2048;
  r.budget.total_bytes = std::int64_t{1} << 50;  // any budget: needs do not depend on it
  const MemoryPlan plan = plan_memory(r);
  EXPECT_EQ(plan.kv.pool_bytes_needed, std::int64_t{32} * 2 * 4096 * 2 * 2048);
  EXPECT_EQ(plan.kv.pool_bytes_needed, 1'073'741'824);
  const std::string text = explain_needs(r, plan);
  EXPECT_THAT(text, HasSubstr("= 1,073,741,824 B (1.00 GiB)"));
  EXPECT_THAT(text, HasSubstr("Needs: weights 13,476,831,232 + workspace "));
  EXPECT_THAT(text, Not(HasSubstr("usable")));
}

TEST(ParallelExplainer, EachStageShowsItsSplitAndTheNodeItsFewestBlocks) {
  const ModelPreset& p = find_model_preset(test::model_presets(), "tinyllama-1.1b");
  ParallelRequest r;
  r.base = make_plan_request(p.spec, preset_weights(p.spec, p.n_params, WeightType::F16),
                             KvDtype::F16, KvDtype::F16);
  r.base.budget.total_bytes = find_gpu_preset(test::gpu_presets(), "rtx-4090").memory_bytes;
  r.base.batch = 4;
  r.base.context = 2048;
  r.n_params = p.n_params;
  r.shape = {8, 1, 0};
  r.kv_dtype = ServingKvDtype::Fp8;
  const ParallelPlan plan = plan_parallel(r);
  const std::string text = explain_parallel(r, plan);
  EXPECT_THAT(
      text, HasSubstr("KV heads per GPU = max(1, 4 / 8) = 1 (each KV head replicated on 2 GPUs)"));
  // 1 head x 2 x 64 x 1 B (fp8) = 128 B per token per layer; 16 x 22 layers x 128 B
  EXPECT_THAT(text, HasSubstr("= 128 B\n"));
  EXPECT_THAT(text, HasSubstr("one block = 16 tokens x 22 layers x 128 B = 45,056 B"));
  EXPECT_THAT(text, HasSubstr("4 sequences x 128 blocks x 45,056 B"));
  EXPECT_THAT(text, HasSubstr(group_digits(plan.kv_blocks) + " blocks x 16 ="));
}

}  // namespace
}  // namespace kvscope
