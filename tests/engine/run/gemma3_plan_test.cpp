// "What fits" for a Gemma 3 is what the engine allocates: the planner counts the sliding
// layers' group at its window (the blocks the window still sees, plus the one being filled;
// its pool at its cap, the window plus a chunk for each of 4 sequences) and the global
// layers' group at the whole context, and an engine given a memory budget builds exactly
// the planner's pool for both groups. A tiny random-weight gemma3 file (MQA,
// head_dim 32, window 32 on five layers of six) stands in for the real shapes.
#include <cstdint>
#include <string>

#include <gtest/gtest.h>

#include "model/synthetic_model.h"
#include "plan/kv_footprint.h"
#include "plan/memory_model.h"
#include "plan/weight_footprint.h"
#include "run/engine.h"
#include "run/plan_check.h"
#include "support/test_data.h"

namespace kvscope {
namespace {

constexpr std::int64_t kWindow = 32;

std::string tiny_gemma3() {
  ModelSpec s;
  s.architecture = "gemma3";
  s.n_layers = 12;  // layers 5 and 11 global
  s.dim = 64;
  s.n_heads = 2;
  s.n_kv_heads = 1;
  s.head_dim = 32;
  s.rope_dim = 32;
  s.ffn_dim = 128;
  s.vocab_size = 320;
  s.context_length = 1024;
  s.rope_theta = 1e6;
  s.norm_eps = 1e-6;
  s.tied_embeddings = true;
  s.sliding_window = kWindow;
  s.sliding_window_period = 6;
  s.rope_theta_local = 1e4;
  const std::string path = (test::scratch_dir() / "tiny-gemma3.gguf").string();
  write_synthetic_gguf(path, s, TensorType::F16, 3);
  return path;
}

TEST(Gemma3Plan, TheSlidingGroupIsCountedAtItsWindow) {
  const Engine engine(tiny_gemma3(), [] {
    EngineOptions o;
    o.backend = BackendChoice::Cpu;
    o.n_threads = 1;
    return o;
  }());
  const KvCacheConfig config = default_kv_config(engine.spec(), KvDtype::F16, KvDtype::F16);
  ASSERT_EQ(config.groups.size(), 2u);
  EXPECT_EQ(config.groups[0].window, kWindow);
  EXPECT_EQ(config.groups[0].layers.size(), 10u);
  EXPECT_EQ(config.groups[1].window, 0);
  EXPECT_EQ(config.groups[1].layers, (std::vector<std::int64_t>{5, 11}));
  // one sequence of 1000 tokens decoded one at a time: the window's blocks and the one being
  // filled in the local group, every block in the global one
  const KvFootprint f = kv_footprint(config, 1, 1000, 1);
  EXPECT_EQ(f.groups[0].held_blocks, kWindow / 16 + 1);
  EXPECT_EQ(f.groups[1].held_blocks, (1000 + 15) / 16);
}

// The engine's pool under a memory budget is the planner's, group by group.
TEST(Gemma3Plan, AnEngineWithABudgetBuildsThePlannersPoolForBothGroups) {
  const std::string model = tiny_gemma3();
  for (const std::uint64_t budget : {std::uint64_t{2'500'000}, std::uint64_t{3'100'000}}) {
    EngineOptions o;
    o.backend = BackendChoice::Cpu;
    o.n_threads = 1;
    o.context_length = 1024;
    o.memory_budget_bytes = budget;
    o.scheduler.max_batch_tokens = 64;
    const Engine engine(model, o);
    PlanRequest r = make_plan_request(engine.spec(), model_weights(engine.model()), o.k_dtype,
                                      o.v_dtype, o.block_size);
    r.kv.max_context = engine.context_length();
    r.batch = 1;
    r.context = 1;
    r.prefill_chunk = o.scheduler.max_batch_tokens;
    r.backend = PlanBackend::Cpu;
    r.budget.total_bytes = static_cast<std::int64_t>(budget);
    r.budget.utilisation = o.memory_utilisation;
    const MemoryPlan plan = plan_memory(r);
    ASSERT_EQ(engine.kv_cache().n_groups(), 2) << budget;
    ASSERT_EQ(plan.kv_group_blocks.size(), 2u);
    for (std::int64_t g = 0; g < 2; ++g) {
      EXPECT_EQ(engine.kv_cache().pool(g).n_blocks(),
                plan.kv_group_blocks[static_cast<std::size_t>(g)])
          << budget;
    }
    // the sliding group at its cap: 4 sequences x ceil((32 + 64 + 14) / 16) blocks; the
    // global group takes the rest of the budget
    EXPECT_EQ(engine.kv_cache().pool(0).n_blocks(), 4 * 7) << budget;
    EXPECT_EQ(engine.kv_cache().pool(1).n_blocks(), plan.kv_blocks_per_group) << budget;
    EXPECT_GT(plan.kv_blocks_per_group, 4 * 7) << budget;
    EXPECT_EQ(static_cast<std::int64_t>(engine.memory_info().kv_pool), plan.kv_pool_bytes)
        << budget;
  }
}

// The CLI's "check against the engine": one sequence grown chunk by chunk reaches exactly
// the planner's maximum context, with the pools and the blocks held as planned.
TEST(Gemma3Plan, TheEnginesCheckAgreesWithTheCappedPools) {
  EngineOptions o;
  o.backend = BackendChoice::Cpu;
  o.n_threads = 1;
  o.context_length = 1024;
  // the sliding group's cap (28 blocks of 20,480 B) and 30 global blocks of 4,096 B
  o.kv_budget_bytes = 28 * 20'480 + 30 * 4'096 + 100;
  o.scheduler.max_batch_tokens = 64;
  Engine engine(tiny_gemma3(), o);
  const PlanCheck check = check_plan(engine);
  EXPECT_EQ(check.planned_max_context, 30 * 16);
  EXPECT_TRUE(check.agrees()) << "planned " << check.planned_max_context << " reached "
                              << check.reached_tokens << ", pools " << check.predicted_pool_bytes
                              << " / " << check.allocated_pool_bytes << ", used "
                              << check.predicted_used_bytes << " / " << check.allocated_used_bytes;
  EXPECT_GT(check.plan.kv_full_cache_bytes, check.plan.kv.pool_bytes_needed);
}

}  // namespace
}  // namespace kvscope
