// check_plan: the planner's prediction for a loaded engine equals what its allocator does
// when one sequence is grown to the planned maximum, for every way the pool is sized.
#include "run/plan_check.h"

#include <gtest/gtest.h>

#include "plan/memory_model.h"
#include "plan/weight_footprint.h"
#include "support/engine_fixture.h"
#include "util/error.h"

namespace kvscope {
namespace {

void expect_agreement(const PlanCheck& c, const char* what) {
  EXPECT_TRUE(c.agrees()) << what;
  EXPECT_EQ(c.reached_tokens, c.planned_max_context) << what;
  EXPECT_EQ(c.allocated_pool_bytes, c.predicted_pool_bytes) << what;
  EXPECT_EQ(c.allocated_used_bytes, c.predicted_used_bytes) << what;
  EXPECT_TRUE(c.next_token_refused) << what;
  EXPECT_GT(c.reached_tokens, 0) << what;
}

TEST(PlanCheck, AMemoryBudgetIsFilledToThePlannedMaximum) {
  KVSCOPE_REQUIRE_SHARED(model, "models/stories260K.gguf");
  EngineOptions o = small_options(512);
  o.memory_budget_bytes = 1'650'000;
  o.scheduler.max_batch_tokens = 64;
  Engine engine(model, o);
  const PlanCheck c = check_plan(engine);
  expect_agreement(c, "memory budget");
  EXPECT_LT(c.reached_tokens, 512);  // the pool, not the context, is the limit
  EXPECT_EQ(c.reached_tokens % 16, 0);
  EXPECT_EQ(c.memory.total, o.memory_budget_bytes);
  EXPECT_EQ(static_cast<std::int64_t>(c.memory.kv_pool), c.allocated_pool_bytes);
  EXPECT_EQ(engine.snapshot().n_used, 0);  // the test sequence is gone
}

TEST(PlanCheck, AnInt4CacheWithItsExactTailAgreesToo) {
  KVSCOPE_REQUIRE_SHARED(model, "models/stories260K.gguf");
  for (const std::uint64_t memory : {1'650'000, 0}) {
    EngineOptions o = small_options(512);
    o.k_dtype = o.v_dtype = KvDtype::Int4;
    o.memory_budget_bytes = memory;  // 0: the default pool
    o.scheduler.max_batch_tokens = 64;
    Engine engine(model, o);
    ASSERT_GT(kv_exact_tail_bytes(engine.kv_cache().config()), 0) << "no exact tail";
    const PlanCheck c = check_plan(engine);
    expect_agreement(c, memory > 0 ? "int4, memory budget" : "int4, default pool");
    EXPECT_EQ(static_cast<std::int64_t>(c.memory.kv_pool), c.allocated_pool_bytes);
  }
}

TEST(PlanCheck, APlanForTheCpuAsTheCliMakesItHasTheEnginesTail) {
  // `kvscope-cli plan --backend cpu -ctk int4 -ctv int4 --vram 1650000 -c 512 --chunk 64`
  KVSCOPE_REQUIRE_SHARED(model, "models/stories260K.gguf");
  EngineOptions o = small_options(512);
  o.k_dtype = o.v_dtype = KvDtype::Int4;
  o.memory_budget_bytes = 1'650'000;
  o.scheduler.max_batch_tokens = 64;
  const Engine engine(model, o);
  PlanRequest r =
      make_plan_request(engine.spec(), model_weights(engine.model()), KvDtype::Int4, KvDtype::Int4);
  r.kv.max_context = 512;
  r.context = 512;
  r.prefill_chunk = 64;
  r.backend = PlanBackend::Cpu;
  r.budget = {1'650'000, o.memory_utilisation, 0};
  const MemoryPlan plan = plan_memory(r);
  const KvCacheManager& kv = engine.kv_cache();
  ASSERT_GT(kv_exact_tail_bytes(kv.config()), 0);
  EXPECT_EQ(plan.kv_blocks_per_group, kv.pool(0).n_blocks());
  EXPECT_EQ(plan.kv_pool_bytes, static_cast<std::int64_t>(engine.memory_info().kv_pool));
  r.backend = PlanBackend::Cuda;  // no tail there unless asked (its fast kernel reads none)
  const MemoryPlan cuda = plan_memory(r);
  EXPECT_EQ(cuda.kv_pool_bytes, cuda.kv_blocks_per_group * cuda.kv_block_set_bytes);
}

TEST(PlanCheck, ADirectKvBudgetAndTheDefaultPoolAgreeToo) {
  KVSCOPE_REQUIRE_SHARED(model, "models/stories260K.gguf");
  Engine budget(model, pool_of(model, 5, 8));
  const PlanCheck b = check_plan(budget);
  expect_agreement(b, "KV budget");
  EXPECT_EQ(b.reached_tokens, 5 * 8);

  Engine roomy(model, small_options());  // pool sized for 4 full contexts
  const PlanCheck r = check_plan(roomy);
  expect_agreement(r, "default pool");
  EXPECT_EQ(r.reached_tokens, test::kContext);
}

TEST(PlanCheck, RefusedWhileAReplyRunsAndKeptPrefixesAreLetGo) {
  KVSCOPE_REQUIRE_SHARED(model, "models/stories260K.gguf");
  Engine engine(model, small_options());
  Recorded rec;
  GenerationRequest r = greedy_request(engine, story_prompts()[0], 20);
  r.keep_cache = true;
  engine.submit(r, record_into(rec));
  ASSERT_TRUE(engine.step());
  EXPECT_THROW(check_plan(engine), UsageError);
  run_bounded(engine);
  EXPECT_EQ(engine.scheduler().n_kept(), 1);
  expect_agreement(check_plan(engine), "after a kept reply");
  EXPECT_EQ(engine.scheduler().n_kept(), 0);
}

}  // namespace
}  // namespace kvscope
