// A whole model on the CUDA backend under a memory budget, checked against the planner: the
// engine sizes its pool with the workspace the planner counts for its own device (its compute
// capability's cuBLAS workspace, its SMs) and its own context (the RoPE and block tables), so
// "Check against the engine" (run/plan_check.h) agrees, and a sequence reaches exactly the
// planner's longest context. Before, both counted sm_90's 32 MiB cuBLAS workspace and the
// model's whole context whatever the device and the engine's context.
#include <cstdint>
#include <optional>

#include <gtest/gtest.h>

#include "backend/cuda_backend.h"
#include "backend/cuda_factory.h"
#include "kernel_test_support.h"
#include "plan/cuda_workspace.h"
#include "plan/memory_model.h"
#include "run/engine.h"
#include "run/plan_check.h"
#include "support/test_data.h"

namespace kvscope {
namespace {

constexpr std::int64_t kMiB = std::int64_t{1} << 20;

TEST(CudaPlanCheck, AMemoryBudgetIsPlannedWithTheDevicesWorkspaceAndTheEnginesContext) {
  KVSCOPE_REQUIRE_CUDA();
  KVSCOPE_REQUIRE_SHARED(path, "models/SmolLM2-135M-Instruct.Q4_1.gguf");
  EngineOptions o;
  o.backend = BackendChoice::Cuda;
  o.n_threads = 1;
  o.context_length = 2048;
  // weights (~93 MiB), the CUDA context's 512 MiB and a workspace of about 100 MiB leave a
  // pool of a few thousand tokens, less than the context
  o.memory_budget_bytes = std::uint64_t{800} << 20;
  o.cuda_factory = cuda_backend_factory(CudaBackendOptions{});
  Engine engine(path, o);
  const std::optional<CudaWorkspaceOptions> device = engine.backend().cuda_plan_options();
  ASSERT_TRUE(device.has_value()) << engine.backend().name();

  const PlanCheck c = check_plan(engine);
  EXPECT_TRUE(c.agrees()) << "pool " << c.allocated_pool_bytes << " vs " << c.predicted_pool_bytes
                          << ", reached " << c.reached_tokens << " vs " << c.planned_max_context;
  EXPECT_EQ(c.allocated_pool_bytes, c.predicted_pool_bytes);
  EXPECT_EQ(c.reached_tokens, c.planned_max_context);
  EXPECT_LT(c.planned_max_context, o.context_length);  // the budget, not the context, limits

  // The plan's shared buffers are the device's cuBLAS workspace (4 MiB on the emulation's
  // sm_86) and RoPE tables for the engine's 2,048 positions, not the model's 8,192.
  const ModelSpec& s = engine.spec();
  const std::int64_t rope = 2 * o.context_length * (s.rope_dim / 2) * 4;
  EXPECT_EQ(c.plan.workspace.buffers, rope + cublas_workspace_bytes(device->compute_major) +
                                          cuda_gemm_slab_bytes(s.vocab_size, s.dim));
  // Planned as before (sm_90's 32 MiB, the model's context), the pool would be smaller by
  // the difference, which the engine now keeps for the cache.
  PlanRequest before = engine_plan_request(engine);
  before.cuda = CudaWorkspaceOptions{};
  before.engine_context = s.context_length;
  before.context = c.planned_max_context;
  const std::int64_t lost = plan_memory(before).workspace.total() - c.plan.workspace.total();
  if (device->compute_major < 9) {
    EXPECT_GT(lost, 28 * kMiB);
  }
}

}  // namespace
}  // namespace kvscope
