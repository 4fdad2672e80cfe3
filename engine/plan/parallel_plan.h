// A model served over several GPUs of one kind, as vLLM splits it, planned per GPU.
//
// Tensor parallel (tp ranks): every layer's attention heads, FFN columns and the vocabulary
// rows of the embedding and output head are split tp ways. KV heads split too; when tp
// exceeds n_kv_heads a KV head is replicated, as vLLM does: each rank holds
//     kv_heads_per_rank = max(1, n_kv_heads / tp)
// (vLLM requires n_heads % tp == 0 and n_kv_heads % tp == 0 or tp % n_kv_heads == 0).
// Pipeline parallel (pp stages): layers are split into contiguous runs, vLLM's
// get_pp_indices: n_layers / pp each, and the n_layers % pp left over go one each to the
// stages before the last (the last already carries the output head). Stage 0 holds the
// token embedding, the last stage the output head (a tied head too when pp > 1: that
// stage has no embedding table to share).
//
// Per GPU of a stage (all tp ranks of a stage are alike):
//   weights   = ceil(rank params x weight bytes / n_params), rank params =
//               stage layers x (ceil((layer params - kv proj) / tp) + kv proj per rank)
//               + ceil(vocab x dim / tp) for the embedding and again for the head,
//               layer params = (n_params - embedding - untied head) / n_layers,
//               kv proj = 2 x dim x n_kv_heads x head_dim (+ biases), per rank with
//               kv_heads_per_rank heads
//   KV pool   = plan_memory of the stage's layers and KV heads: the allocator's bytes
//   workspace = plan_memory's for the rank's shape (heads, FFN and layers divided)
// The node's KV capacity is the fewest blocks any stage gets (vLLM gives every worker the
// minimum), in tokens blocks x block_size; it fits when every stage fits.
#pragma once

#include <cstdint>
#include <vector>

#include "plan/memory_model.h"
#include "plan/serving_kv_dtype.h"

namespace kvscope {

inline constexpr std::int64_t kMaxNodeGpus = 8;  // an HGX / DGX node

struct ParallelShape {
  std::int64_t tp = 1;
  std::int64_t pp = 1;
  std::int64_t node_gpus = 0;  // GPUs in the node; 0: tp x pp
  std::int64_t gpus() const { return tp * pp; }
};

// UsageError for a shape vLLM would refuse or the node cannot hold: tp or pp < 1, tp > 8,
// tp x pp > node_gpus or > 8, n_heads % tp != 0, n_kv_heads and tp not dividing one
// another, pp > n_layers.
void validate_parallel_shape(const ModelSpec& spec, const ParallelShape& shape);

std::int64_t kv_heads_per_rank(std::int64_t n_kv_heads, std::int64_t tp);

struct PipelineStage {
  std::int64_t first_layer = 0;
  std::int64_t n_layers = 0;
  bool embeddings = false;   // stage 0
  bool output_head = false;  // the last stage
};
std::vector<PipelineStage> pipeline_stages(std::int64_t n_layers, std::int64_t pp);

struct ParallelRequest {
  // The whole model: spec, weights (all of them), batch, context, chunk, backend, budget
  // of ONE GPU (utilisation, used by others) and block size (base.kv.block_size). The
  // KV dtype is kv_dtype below; base.kv's dtypes are not used.
  PlanRequest base;
  std::int64_t n_params = 0;  // the weights' parameter count, to split them
  ParallelShape shape;
  ServingKvDtype kv_dtype = ServingKvDtype::Auto;
};

struct StagePlan {
  PipelineStage stage;
  std::int64_t weight_params = 0;  // on one GPU of the stage
  PlanRequest request;             // the GPU's own request (its shape, weights and KV)
  MemoryPlan plan;                 // plan_memory(request)
};

struct ParallelPlan {
  ParallelShape shape;
  std::int64_t kv_heads_per_rank = 0;
  std::vector<StagePlan> stages;       // pp of them
  std::int64_t kv_blocks = 0;          // min over stages of kv_blocks_per_group
  std::int64_t kv_tokens = 0;          // kv_blocks x block_size
  std::int64_t node_bytes_needed = 0;  // sum over GPUs of total_needed
  bool fits = false;                   // every stage fits
};

// Validates the shape (validate_parallel_shape) and the request (plan_memory's checks).
ParallelPlan plan_parallel(const ParallelRequest& request);

}  // namespace kvscope
