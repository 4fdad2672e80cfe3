// How many of a model's layers go on the GPU (EngineOptions::gpu_layers) and what the GPU's
// side of a split takes: the arithmetic the CUDA backend's factory resolves "auto" with and
// the engine sizes a split's KV pools with, so both answer the same bytes.
//
// The GPU's side of k < n layers holds those layers' weights (the embedding table and the
// output head stay on the CPU, split_backend.h), the CUDA workspace of one sequence's steps,
// and its layer groups' blocks; k = n is the whole model on the GPU as without a split.
#pragma once

#include <cstdint>

#include "kv/kv_cache_config.h"
#include "model/model.h"
#include "plan/layer_split_plan.h"
#include "plan/memory_model.h"

namespace kvscope {

struct EngineOptions;

// Weight bytes the GPU holds with k layers on it (k = n_layers: the whole model's).
std::uint64_t gpu_side_weight_bytes(const Model& model, std::int64_t gpu_layers);
// Weight bytes the CPU holds with k < n layers on the GPU: the token table, layers [k, n) and
// the output head (plan_layer_split's cpu.weights).
std::uint64_t cpu_side_weight_bytes(const Model& model, std::int64_t gpu_layers);
// The CPU workspace of one sequence's steps (workspace_for, PlanBackend::Cpu), as
// plan_layer_split counts the CPU side's.
std::int64_t cpu_side_workspace_bytes(const Model& model, const EngineOptions& options);

// What the GPU's KV pools may take with k layers on it: budget's usable bytes less the GPU's
// weights and the CUDA workspace of one sequence on the device `cuda` describes
// (split_gpu_workspace: a part before the model's end holds no output head nor logits rows)
// (kv_budget_from), at least 0.
std::int64_t gpu_side_kv_budget(const Model& model, const EngineOptions& options,
                                const MemoryBudget& budget, std::int64_t gpu_layers,
                                const CudaWorkspaceOptions& cuda);

// The blocks each full-attention group gets when `config`'s on_device groups share
// gpu_kv_budget (kv_blocks_per_group over those groups alone); CapacityError when not one
// block each fits.
std::int64_t gpu_side_pool_blocks(const KvCacheConfig& config, std::int64_t gpu_kv_budget);

// The blocks every full-attention group of a split gets (both sides, Engine::size_split_pools)
// from the n its GPU groups fit (gpu_side_pool_blocks, the planner's kv_blocks_per_group): at
// most scheduler.max_running full contexts, as on the GPU alone, unless a memory budget gave
// the GPU's size (then the plan's n, so a sequence reaches the planner's max context).
std::int64_t split_pool_blocks(std::int64_t gpu_pool_blocks, const EngineOptions& options);

// The planner's request for this model and these options (plan/layer_split_plan.h): one
// sequence of options.context_length tokens, steps of scheduler.max_batch_tokens, the
// engine's layer groups, within budget, the CUDA workspace sized by `cuda` (the backend's
// cuda_plan_options); gpu_layers -1 (the most that fit).
LayerSplitRequest layer_split_request(const Model& model, const EngineOptions& options,
                                      const MemoryBudget& budget, const CudaWorkspaceOptions& cuda);

// The most layers k in [0, n_layers] whose GPU side holds one sequence of
// options.context_length tokens within budget (0: not even one layer fits): the planner's
// answer to layer_split_request.
std::int64_t auto_gpu_layers(const Model& model, const EngineOptions& options,
                             const MemoryBudget& budget, const CudaWorkspaceOptions& cuda);

// The budget a GPU of `device` memory gives (memory_budget_bytes when the options set one,
// as the engine sizes its pool), at options.memory_utilisation.
MemoryBudget gpu_memory_budget(const EngineOptions& options, std::uint64_t device_total,
                               std::uint64_t device_used_by_others);

}  // namespace kvscope
