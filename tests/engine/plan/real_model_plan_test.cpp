// The planner against the allocator with a real model: stories260K (5 layers, 4 KV heads,
// head_dim 8) on the CPU with a small memory budget. The cache the plan sizes reaches the
// planned maximum context and refuses one block more.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kv/kv_cache_manager.h"
#include "model/model.h"
#include "plan/solvers.h"
#include "support/test_data.h"
#include "util/error.h"

namespace kvscope {
namespace {

TEST(RealModelPlan, Stories260kReachesThePlannedContextAndNotOneBlockMore) {
  KVSCOPE_REQUIRE_SHARED(path, "models/stories260K.gguf");
  const auto model = load_model(path);
  PlanRequest r =
      make_plan_request(model->spec(), model_weights(*model), KvDtype::F16, KvDtype::F16);
  r.backend = PlanBackend::Cpu;
  r.budget.utilisation = 1.0;
  const Workspace w = workspace_for(r.spec, r.batch, r.prefill_chunk, r.backend);
  // One block: 16 tokens x 5 layers x (4 heads x (8 + 8) x 2 B) = 10,240 B. Leave room for
  // 37 blocks and a little, so memory, not the model's context, is the limit.
  ASSERT_EQ(kv_block_set_bytes(r.kv), 10'240);
  r.budget.total_bytes = r.weights.bytes + w.total() + 37 * 10'240 + 5'000;
  ASSERT_GT(r.spec.context_length, 37 * 16);

  const MaxContext m = max_context(r);
  EXPECT_EQ(m.tokens, 37 * 16);
  EXPECT_FALSE(m.limited_by_max_context);

  r.context = m.tokens;
  const MemoryPlan plan = plan_memory(r);
  ASSERT_TRUE(plan.fits);
  KvCacheConfig config = r.kv;
  config.budget_bytes = plan.kv_budget_bytes;
  KvCacheManager kv(config);
  EXPECT_EQ(kv.usage().n_blocks, plan.kv_blocks_per_group);
  kv.add_sequence(0);
  for (std::int64_t t = 0; t < m.tokens; t += r.prefill_chunk) {
    kv.grow(0, std::min(r.prefill_chunk, m.tokens - t));
  }
  EXPECT_EQ(kv.n_tokens(0), m.tokens);
  EXPECT_EQ(kv.usage().n_used * kv.layout(0).block_bytes(), plan.kv.held_bytes);
  try {
    kv.grow(0, 1);
    FAIL() << "grew past the planned maximum";
  } catch (const CapacityError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("KV cache full"));
    EXPECT_THAT(e.what(), ::testing::HasSubstr("to grow from 592 to 593 tokens"));
  }
}

}  // namespace
}  // namespace kvscope
