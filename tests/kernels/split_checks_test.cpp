// A split engine (run/split_backend.h) checked as it is built (issue #40): "Check against the
// engine" (run/plan_check.h) sets the planner's split beside each side's allocation and grows
// a sequence in the split's pools, and the host-memory check before the cache is built
// (run/kv_host_fit.h) counts the CPU's side alone.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kernel_test_support.h"
#include "model/model.h"
#include "plan/layer_split_plan.h"
#include "plan/memory_model.h"
#include "plan/solvers.h"
#include "run/engine.h"
#include "run/kv_host_fit.h"
#include "run/layer_split.h"
#include "run/plan_check.h"
#include "run/split_backend.h"
#include "split_test_support.h"
#include "support/test_data.h"
#include "util/error.h"

namespace kvscope {
namespace {

using ::testing::HasSubstr;

constexpr const char* kSmolLm2 = "models/SmolLM2-135M-Instruct.Q4_1.gguf";

void expect_sides_agree(const PlanCheck& c, std::int64_t gpu_layers, const char* what) {
  ASSERT_TRUE(c.split.has_value()) << what;
  const SplitCheck& s = *c.split;
  EXPECT_EQ(s.gpu_layers, gpu_layers) << what;
  EXPECT_EQ(s.plan.gpu_layers, gpu_layers) << what;
  EXPECT_EQ(s.gpu.allocated_weights, s.gpu.predicted_weights) << what;
  EXPECT_EQ(s.gpu.allocated_pool_bytes, s.gpu.predicted_pool_bytes) << what;
  EXPECT_EQ(s.cpu.allocated_weights, s.cpu.predicted_weights) << what;
  EXPECT_EQ(s.cpu.allocated_pool_bytes, s.cpu.predicted_pool_bytes) << what;
  // the whole cache is both sides' pools, and one sequence reaches the planned context
  EXPECT_EQ(c.predicted_pool_bytes, s.gpu.predicted_pool_bytes + s.cpu.predicted_pool_bytes)
      << what;
  EXPECT_EQ(c.allocated_pool_bytes, c.predicted_pool_bytes) << what;
  EXPECT_EQ(c.allocated_used_bytes, c.predicted_used_bytes) << what;
  EXPECT_EQ(c.reached_tokens, c.planned_max_context) << what;
  EXPECT_GT(c.reached_tokens, 0) << what;
  EXPECT_TRUE(c.agrees()) << what;
}

// auto, under a memory budget where 15 of SmolLM2's 30 layers fit a 1,024-token context.
EngineOptions auto_where_15_layers_fit(const std::string& path) {
  EngineOptions o = test::split_options(EngineOptions::kAutoGpuLayers);
  o.kv_budget_bytes = 0;
  o.context_length = 1024;
  o.memory_budget_bytes = test::budget_for_gpu_layers(*load_model(path), o, 15);
  return o;
}

// auto under a memory budget where 15 of SmolLM2's 30 layers fit a 1,024-token context: the
// check's split is the planner's, each side holds the plan's weights and pools (the GPU's
// pools are the plan's kv_pool), and the sequence fills the context in the split's pools.
TEST(SplitPlanCheck, AutoUnderAMemoryBudgetAgreesOnEachSide) {
  KVSCOPE_REQUIRE_CUDA();
  KVSCOPE_REQUIRE_SHARED(path, kSmolLm2);
  const EngineOptions o = auto_where_15_layers_fit(path);
  Engine engine(path, o);
  ASSERT_EQ(engine.split_gpu_layers(), 15) << engine.backend().name();
  const PlanCheck c = check_plan(engine);
  expect_sides_agree(c, 15, "auto, memory budget");
  EXPECT_EQ(c.split->gpu.predicted_pool_bytes, c.split->plan.gpu.kv_pool);
  EXPECT_EQ(c.split->cpu.predicted_pool_bytes, c.split->plan.cpu.kv_pool);
  EXPECT_EQ(c.planned_max_context, 1024);
  EXPECT_NE(c.memory.device.find("15/30 layers"), std::string::npos) << c.memory.device;
  EXPECT_EQ(engine.snapshot().n_used, 0);  // the test sequence is gone
}

// A count of layers with a direct KV budget: the budget is shared by all four groups' pools
// as without a split, and the sides still hold what the plan says.
TEST(SplitPlanCheck, ACountWithAKvBudgetAgreesOnEachSide) {
  KVSCOPE_REQUIRE_CUDA();
  KVSCOPE_REQUIRE_SHARED(path, kSmolLm2);
  EngineOptions o = test::split_options(10);
  o.kv_budget_bytes = std::uint64_t{2} << 20;  // / 368,640 bytes a block row: 5 blocks
  Engine engine(path, o);
  const PlanCheck c = check_plan(engine);
  expect_sides_agree(c, 10, "10 layers, KV budget");
  EXPECT_LT(c.reached_tokens, o.context_length);  // the pool, not the context, is the limit
}

// The host-memory check Engine::init runs, with the split engine's own cache config and a
// machine of exactly what its CPU side needs: passed, though the whole model's weights and the
// CPU's pools would not fit; a byte less is refused naming both figures.
// int8 KV with an exact tail asked for (kv/exact_tail.h: fp16 copies of each sequence's newest
// blocks): each side's memory counts its own groups' copies, the GPU's in VRAM and the CPU's
// in RAM, so the two KV pools add up to the whole cache. Before, the CPU's side also counted
// the GPU groups' copies.
TEST(SplitMemory, EachSideCountsItsOwnGroupsExactTailCopies) {
  KVSCOPE_REQUIRE_CUDA();
  KVSCOPE_REQUIRE_SHARED(model, "models/stories260K.gguf");
  EngineOptions o = test::split_options(2);
  o.k_dtype = o.v_dtype = KvDtype::Int8;
  o.kv_exact_tail_blocks = 2;
  Engine engine(model, o);
  GenerationRequest r;
  r.prompt = engine.tokenize("Once upon a time", true);
  r.max_tokens = 4;
  r.sampling.temperature = 0;
  (void)engine.generate(r);
  const KvCacheConfig& c = engine.kv_cache().config();
  const std::int64_t gpu_tails = kv_exact_tail_bytes(c, false);
  const std::int64_t cpu_tails = kv_exact_tail_bytes(c, true);
  ASSERT_GT(gpu_tails, 0);
  ASSERT_GT(cpu_tails, 0);
  std::int64_t gpu_pools = 0, cpu_pools = 0;
  for (std::int64_t g = 0; g < engine.kv_cache().n_groups(); ++g) {
    const std::int64_t bytes =
        engine.kv_cache().pool(g).n_blocks() * engine.kv_cache().layout(g).block_bytes();
    (c.groups[static_cast<std::size_t>(g)].on_device ? gpu_pools : cpu_pools) += bytes;
  }
  const std::optional<SplitMemory> split = engine.split_memory();
  ASSERT_TRUE(split.has_value());
  EXPECT_EQ(static_cast<std::int64_t>(split->gpu.kv_pool), gpu_pools + gpu_tails);
  EXPECT_EQ(static_cast<std::int64_t>(split->cpu.kv_pool), cpu_pools + cpu_tails);
  EXPECT_EQ(static_cast<std::int64_t>(split->gpu.kv_pool + split->cpu.kv_pool),
            gpu_pools + cpu_pools + kv_exact_tail_bytes(c));
}

// What `bench` sets a split's measured rate beside (engine_split_plan): the bytes a decode
// step streams from VRAM and from RAM add up to the whole model's decode traffic at the same
// context (roofline_decode of the all-CPU engine), and the roofline is each side's bytes over
// its own bandwidth.
TEST(SplitPlanCheck, ASplitsDecodeTrafficIsTheWholeModelsSplitBySide) {
  KVSCOPE_REQUIRE_CUDA();
  KVSCOPE_REQUIRE_SHARED(model, "models/stories260K.gguf");
  constexpr std::int64_t kContext = 96;
  Engine split(model, test::split_options(2));
  Engine cpu(model, test::split_options(0));
  PlanRequest whole = engine_plan_request(cpu);
  whole.context = kContext;
  const RooflineEstimate all = roofline_decode(whole, 10.0);
  const LayerSplitPlan s = engine_split_plan(split, kContext, 100.0, 10.0);
  EXPECT_EQ(s.gpu_layers, 2);
  EXPECT_GT(s.gpu_bytes_per_step, 0);
  EXPECT_GT(s.cpu_bytes_per_step, 0);
  EXPECT_EQ(s.gpu_bytes_per_step + s.cpu_bytes_per_step, all.bytes_per_step);
  EXPECT_DOUBLE_EQ(s.seconds_per_step, static_cast<double>(s.gpu_bytes_per_step) / 100e9 +
                                           static_cast<double>(s.cpu_bytes_per_step) / 10e9);
  EXPECT_THROW((void)engine_split_plan(cpu, kContext), UsageError);  // not split
}

TEST(SplitHostFit, AnEngineWhoseCpuSideFitsIsNotRefusedThoughTheWholeModelWouldBe) {
  KVSCOPE_REQUIRE_CUDA();
  KVSCOPE_REQUIRE_SHARED(path, kSmolLm2);
  const EngineOptions o = auto_where_15_layers_fit(path);
  Engine engine(path, o);
  const KvCacheConfig& config = engine.kv_cache().config();
  const SplitMemory m = *engine.split_memory();
  ASSERT_EQ(m.gpu_layers, 15);
  ASSERT_GT(config.n_blocks, 0) << "a split's pools are sized by block count";
  const std::uint64_t cpu_needs =
      cpu_side_weight_bytes(engine.model(), 15) + m.cpu.kv_pool +
      static_cast<std::uint64_t>(cpu_side_workspace_bytes(engine.model(), engine.options()));
  EXPECT_EQ(cpu_side_weight_bytes(engine.model(), 15), m.cpu.weights);
  ASSERT_GT(engine.model().weight_bytes() + m.cpu.kv_pool, cpu_needs);
  EXPECT_NO_THROW(check_engine_fits_host(config, engine.model(), engine.options(), 15, cpu_needs));
  try {
    check_engine_fits_host(config, engine.model(), engine.options(), 15, cpu_needs - 1);
    FAIL() << "a CPU side of " << cpu_needs << " bytes fit in one byte less";
  } catch (const CapacityError& e) {
    EXPECT_THAT(e.what(), HasSubstr("the CPU's side of the split (layers 15 to 29 of 30) needs"));
    EXPECT_THAT(e.what(), HasSubstr("this machine has"));
  }
}

}  // namespace
}  // namespace kvscope
