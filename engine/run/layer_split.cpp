#include "run/layer_split.h"

#include <algorithm>

#include "plan/model_layer_groups.h"
#include "run/engine.h"

namespace kvscope {

namespace {

// The engine's layer groups for the options, split at k (k = n: all on the device).
KvCacheConfig split_config(const Model& model, const EngineOptions& o, std::int64_t gpu_layers) {
  const ModelSpec& spec = model.spec();
  KvCacheConfig c;
  c.groups =
      o.layer_groups.empty() ? model_layer_groups(spec, o.k_dtype, o.v_dtype) : o.layer_groups;
  c.groups = split_layer_groups(c.groups, gpu_layers);
  c.n_kv_heads = spec.n_kv_heads;
  c.head_dim = spec.head_dim;
  c.block_size = o.block_size;
  c.max_context = o.context_length;
  c.window_sequences = std::clamp<std::int64_t>(o.default_sequences, 1, o.scheduler.max_running);
  c.max_grow_tokens = o.scheduler.max_batch_tokens;
  return c;
}

// The on_device groups of a config (the GPU's side).
KvCacheConfig device_groups(KvCacheConfig c) {
  std::erase_if(c.groups, [](const LayerGroupConfig& g) { return !g.on_device; });
  c.exact_tail_blocks = 0;
  c.exact_tail_shadows = 0;
  return c;
}

// The planner's request of layer_split_request without the layers' byte counts: what the
// GPU side's workspace needs (split_gpu_workspace).
PlanRequest split_plan_request(const Model& model, const EngineOptions& options,
                               const MemoryBudget& budget, const CudaWorkspaceOptions& cuda) {
  const ModelSpec& spec = model.spec();
  PlanRequest r;
  r.spec = spec;
  r.kv = split_config(model, options, spec.n_layers);
  r.batch = 1;
  r.context = options.context_length;
  r.prefill_chunk = options.scheduler.max_batch_tokens;
  r.cuda = cuda;
  r.engine_context = options.context_length;
  r.budget = budget;
  return r;
}

}  // namespace

std::uint64_t gpu_side_weight_bytes(const Model& model, std::int64_t gpu_layers) {
  if (gpu_layers >= model.spec().n_layers) return model.weight_bytes();
  return model.weight_bytes(0, gpu_layers, false, false);
}

std::uint64_t cpu_side_weight_bytes(const Model& model, std::int64_t gpu_layers) {
  return model.weight_bytes(gpu_layers, model.spec().n_layers, true, true);
}

std::int64_t cpu_side_workspace_bytes(const Model& model, const EngineOptions& options) {
  return workspace_for(model.spec(), 1, options.scheduler.max_batch_tokens, PlanBackend::Cpu)
      .total();
}

std::int64_t gpu_side_kv_budget(const Model& model, const EngineOptions& options,
                                const MemoryBudget& budget, std::int64_t gpu_layers,
                                const CudaWorkspaceOptions& cuda) {
  const Workspace ws =
      split_gpu_workspace(split_plan_request(model, options, budget, cuda), gpu_layers);
  return kv_budget_from(budget, static_cast<std::int64_t>(gpu_side_weight_bytes(model, gpu_layers)),
                        ws);
}

std::int64_t gpu_side_pool_blocks(const KvCacheConfig& config, std::int64_t gpu_kv_budget) {
  KvCacheConfig gpu = device_groups(config);
  gpu.budget_bytes = gpu_kv_budget;
  gpu.n_blocks = 0;
  return kv_blocks_per_group(gpu);
}

std::int64_t split_pool_blocks(std::int64_t gpu_pool_blocks, const EngineOptions& options) {
  if (options.memory_budget_bytes > 0) return gpu_pool_blocks;
  const std::int64_t blocks_per_context =
      (options.context_length + options.block_size - 1) / options.block_size;
  return std::min(gpu_pool_blocks, options.scheduler.max_running * blocks_per_context);
}

LayerSplitRequest layer_split_request(const Model& model, const EngineOptions& options,
                                      const MemoryBudget& budget,
                                      const CudaWorkspaceOptions& cuda) {
  LayerSplitRequest r;
  r.plan = split_plan_request(model, options, budget, cuda);
  set_model_layer_bytes(r, model);
  return r;
}

std::int64_t auto_gpu_layers(const Model& model, const EngineOptions& options,
                             const MemoryBudget& budget, const CudaWorkspaceOptions& cuda) {
  return plan_layer_split(layer_split_request(model, options, budget, cuda)).gpu_layers;
}

MemoryBudget gpu_memory_budget(const EngineOptions& options, std::uint64_t device_total,
                               std::uint64_t device_used_by_others) {
  if (options.memory_budget_bytes > 0) {
    return {static_cast<std::int64_t>(options.memory_budget_bytes), options.memory_utilisation, 0};
  }
  return {static_cast<std::int64_t>(device_total), options.memory_utilisation,
          static_cast<std::int64_t>(device_used_by_others)};
}

}  // namespace kvscope
