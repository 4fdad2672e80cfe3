// A model larger than the GPU, planned: how many of its layers go on the GPU and what each
// side then holds (run/split_backend.h runs it). The engine resolves --gpu-layers auto with
// plan_layer_split (run/layer_split.cpp), so the planner's split is the engine's split.
//
//   GPU side, k < n layers: layers [0, k)'s weights, the CUDA workspace (workspace_for, as
//                           without a split, less the logits rows' buffers:
//                           split_gpu_workspace), the KV blocks of its layer groups
//   CPU side:               the token embedding table, layers [k, n)'s weights, the output
//                           head; the CPU workspace; the KV blocks of its groups
//   k = n:                  the whole model on the GPU, nothing on the CPU
// The KV blocks are batch sequences of `context` tokens in every group (a window group its
// cap), each side's groups split from the request's by split_layer_groups. k is the largest
// whose GPU side fits budget.usable() (the CPU side is not checked against host RAM).
//
// Decode roofline: a step streams each side's weights and KV from its own memory, one side
// after the other, so
//   seconds per step = GPU bytes / GPU bandwidth + CPU bytes / CPU bandwidth
#pragma once

#include <cstdint>
#include <vector>

#include "plan/memory_model.h"

namespace kvscope {

class Model;

struct LayerSplitRequest {
  // Model, cache (groups, block size, dtypes), batch, context, prefill chunk and the GPU's
  // budget; backend and weights are ignored (the sides' weights are below).
  PlanRequest plan;
  std::vector<std::int64_t> layer_bytes;  // [n_layers] each layer's stored weights
  std::int64_t embedding_bytes = 0;       // the token table
  std::int64_t output_bytes = 0;          // output head + its norm (0 when tied to the table)
  std::int64_t gpu_layers = -1;           // -1: the most that fit; else plan this many
  double gpu_bandwidth_gb_s = 0.0;        // 0: no roofline
  double cpu_bandwidth_gb_s = 0.0;
};

struct SplitSide {
  std::int64_t weights = 0;
  std::int64_t kv = 0;  // the side's layer groups' blocks for batch x context
  std::int64_t workspace = 0;
  // The side's pools as the engine builds them: every group kv_blocks_per_group blocks (a
  // window group its cap), all the GPU's KV budget can hold.
  std::int64_t kv_pool = 0;
  std::int64_t total() const { return weights + kv + workspace; }
};

struct LayerSplitPlan {
  std::int64_t n_layers = 0;
  std::int64_t gpu_layers = 0;  // 0: not one layer fits (the CPU runs everything)
  SplitSide gpu, cpu;
  std::int64_t gpu_usable = 0;           // budget.usable()
  std::int64_t kv_blocks_per_group = 0;  // the pools' n (0 when nothing is on the GPU)
  bool fits = false;                     // gpu.total() <= gpu_usable (always true for 0 layers)
  // roofline: bytes each side streams per decode step; the time and rate 0 without bandwidths
  std::int64_t gpu_bytes_per_step = 0;
  std::int64_t cpu_bytes_per_step = 0;
  double seconds_per_step = 0.0;
  double tokens_per_s = 0.0;  // all sequences together
};

// Estimated per-side weights (layer_bytes, embedding_bytes, output_bytes) from
// plan.weights.bytes: the token table (and an untied output head) at `bytes_per_param`, the
// rest shared evenly by the layers (the last takes the remainder). For a file whose tensors
// are counted whole (a catalog entry, a model on disk).
void set_even_layer_bytes(LayerSplitRequest& request, double bytes_per_param);
// The same for a preset: the table at the weight type's bits per weight.
void set_preset_layer_bytes(LayerSplitRequest& request, WeightType type);
// A loaded model's exact ones: each layer's stored tensors, the table, an untied head.
void set_model_layer_bytes(LayerSplitRequest& request, const Model& model);

// The split with request.gpu_layers on the GPU, or the most that fit (-1).
LayerSplitPlan plan_layer_split(const LayerSplitRequest& request);

// The GPU side's KV bytes with k layers on it (a step of plan_layer_split, for the engine).
std::int64_t split_gpu_kv_bytes(const PlanRequest& plan, std::int64_t gpu_layers);

// The CUDA workspace of the GPU's side with k layers on it, for steps of plan.batch sequences
// and plan.prefill_chunk tokens (workspace_for with plan.cuda, the GPU's layer groups and the
// engine's positions, plan_engine_context; as the engine sizes its pools). k < n_layers: a
// part before the model's end holds no output head, so its fp16 slab is its layers' largest
// projection's (cuda_layer_slab_bytes, unless plan.cuda gives one), and it computes no
// logits, so it holds none of the buffers sized by logits rows (logits [rows][vocab], final
// hidden states [rows][dim], greedy picks, the rows' step-table ints): the CUDA backend plans
// its steps without rows.
Workspace split_gpu_workspace(const PlanRequest& plan, std::int64_t gpu_layers);

}  // namespace kvscope
