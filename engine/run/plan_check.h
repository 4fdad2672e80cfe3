// "Check against the engine": the planner's prediction for a loaded engine, set beside
// what that engine's allocator really does when one sequence is grown to the planned
// maximum context. Both sides use the engine's own model, options and backend; nothing
// here is a second formula.
//
//   predicted: plan_memory() for batch 1 with the engine's layer groups, block size,
//              budget (memory budget x utilisation, a direct KV budget, or the pool the
//              engine built when it had neither) and backend kind; max_context() of it.
//   allocated: the KV pool the KvCacheManager built, and the blocks one sequence holds
//              once grown (chunk by chunk, as prefill grows it) until one more token is
//              refused or the context is full.
#pragma once

#include <cstdint>

#include "plan/memory_model.h"
#include "run/backend.h"

namespace kvscope {

class Engine;

struct PlanCheck {
  MemoryPlan plan;                        // the prediction at planned_max_context
  std::int64_t planned_max_context = 0;   // max_context() of the engine's plan request
  std::int64_t reached_tokens = 0;        // tokens the sequence really reserved
  std::int64_t predicted_pool_bytes = 0;  // plan.kv_pool_bytes
  std::int64_t allocated_pool_bytes = 0;  // every group's pool in the KvCacheManager
  std::int64_t predicted_used_bytes = 0;  // plan.kv.pool_bytes_needed
  std::int64_t allocated_used_bytes = 0;  // blocks held at reached_tokens x block bytes
  bool next_token_refused = false;        // reached_tokens + 1 did not fit
  MemoryInfo memory;                      // the backend's memory info at the maximum
  bool agrees() const {
    return reached_tokens == planned_max_context && predicted_pool_bytes == allocated_pool_bytes &&
           predicted_used_bytes == allocated_used_bytes;
  }
};

// The plan request the engine's own pool sizing answers (Engine::make_kv_config): its
// model, layer groups and block size, batch 1, the scheduler's chunk, this backend, and the
// budget the engine was given; without one, exactly the pool the engine built. context is
// left 0 for the caller.
PlanRequest engine_plan_request(const Engine& engine);

// Runs the check on an idle engine (UsageError while requests are live) and releases the
// test sequence afterwards, leaving the cache as it was.
PlanCheck check_plan(Engine& engine);

}  // namespace kvscope
