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
//
// A model split between GPU and CPU (run/split_backend.h) is checked as it is built: the
// planner's split (plan_layer_split of the engine's own request, layer_split_request) gives
// the layers on the GPU, each side's weights, and the blocks every group's pool gets (as many
// as the GPU's groups fit its budget, on both sides); the sequence is grown in those pools.
// Each side's weights and pools are set beside what that side's backend holds.
#pragma once

#include <cstdint>
#include <optional>

#include "plan/layer_split_plan.h"
#include "plan/memory_model.h"
#include "run/backend.h"

namespace kvscope {

class Engine;

// One side of a split: the planner's bytes beside its backend's memory_info().
struct SplitSideCheck {
  std::int64_t predicted_weights = 0;     // plan_layer_split's side weights
  std::int64_t allocated_weights = 0;     // the side's backend
  std::int64_t predicted_pool_bytes = 0;  // the plan's pools of the side's layer groups
  std::int64_t allocated_pool_bytes = 0;  // the side's backend (the GPU's: in device memory)
  bool agrees() const {
    return predicted_weights == allocated_weights && predicted_pool_bytes == allocated_pool_bytes;
  }
};

struct SplitCheck {
  LayerSplitPlan plan;          // the planner's split at the engine's budget
  std::int64_t gpu_layers = 0;  // the engine's (plan.gpu_layers is the planner's)
  SplitSideCheck gpu, cpu;
  bool agrees() const { return plan.gpu_layers == gpu_layers && gpu.agrees() && cpu.agrees(); }
};

struct PlanCheck {
  // The prediction at planned_max_context. For a split its weights and workspace are the
  // whole model's on one backend; `split` has each side's.
  MemoryPlan plan;
  std::int64_t planned_max_context = 0;   // max_context() of the engine's plan request
  std::int64_t reached_tokens = 0;        // tokens the sequence really reserved
  std::int64_t predicted_pool_bytes = 0;  // plan.kv_pool_bytes (a split's: both sides')
  std::int64_t allocated_pool_bytes = 0;  // every group's pool in the KvCacheManager
  std::int64_t predicted_used_bytes = 0;  // plan.kv.pool_bytes_needed
  std::int64_t allocated_used_bytes = 0;  // blocks held at reached_tokens x block bytes
  bool next_token_refused = false;        // reached_tokens + 1 did not fit
  MemoryInfo memory;                      // the backend's at the maximum (a split: its GPU's)
  std::optional<SplitCheck> split;        // a split engine's sides; nullopt without a split
  bool agrees() const {
    return reached_tokens == planned_max_context && predicted_pool_bytes == allocated_pool_bytes &&
           predicted_used_bytes == allocated_used_bytes && (!split || split->agrees());
  }
};

// The plan request the engine's own pool sizing answers (Engine::make_kv_config): its
// model, layer groups and block size, batch 1, the scheduler's chunk, this backend, and the
// budget the engine was given; without one, exactly the pool the engine built. A split's
// pools are sized by its GPU's side, so its request gets them as a KV budget: the planner's
// split's blocks in every group (engine_split_request), or the direct KV budget, shared by all
// groups. context is left 0 for the caller.
PlanRequest engine_plan_request(const Engine& engine);

// For a split engine: the planner's request for its layers (layer_split_request) at the
// budget the engine sized the GPU's side with, gpu_layers as the options ask (a count, else
// -1: the most that fit, as auto and the default resolve them). UsageError without a split.
LayerSplitRequest engine_split_request(const Engine& engine);

// For a split engine: the planner's split at the engine's own layer count for one sequence
// of `context` tokens, with the decode step's bytes from each memory (gpu_bytes_per_step,
// cpu_bytes_per_step; the roofline's time when the bandwidths are given, GB/s, 0: none).
// UsageError without a split.
LayerSplitPlan engine_split_plan(const Engine& engine, std::int64_t context,
                                 double gpu_bandwidth_gb_s = 0.0, double cpu_bandwidth_gb_s = 0.0);

// Runs the check on an idle engine (UsageError while requests are live) and releases the
// test sequence afterwards, leaving the cache as it was.
PlanCheck check_plan(Engine& engine);

}  // namespace kvscope
