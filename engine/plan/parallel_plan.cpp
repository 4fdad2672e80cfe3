#include "plan/parallel_plan.h"

#include <algorithm>
#include <limits>

#include "util/error.h"

namespace kvscope {

namespace {

__extension__ using Int128 = __int128;

std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
  return (a + b - 1) / b;
}

// K and V projection parameters of one layer holding `kv_heads` KV heads.
std::int64_t kv_projection_params(const ModelSpec& s, std::int64_t kv_heads) {
  const std::int64_t kv_dim = kv_heads * s.head_dim;
  return 2 * s.dim * kv_dim + (s.qkv_bias ? 2 * kv_dim : 0);
}

// Parameters one GPU of `stage` holds (header formula).
std::int64_t rank_params(const ModelSpec& s, std::int64_t n_params, const ParallelShape& shape,
                         const PipelineStage& stage) {
  const std::int64_t table = s.vocab_size * s.dim;
  const std::int64_t head = s.tied_embeddings ? 0 : table;
  const std::int64_t per_layer = std::max<std::int64_t>(0, n_params - table - head) / s.n_layers;
  const std::int64_t kv_all = std::min(per_layer, kv_projection_params(s, s.n_kv_heads));
  const std::int64_t kv_rank = kv_projection_params(s, kv_heads_per_rank(s.n_kv_heads, shape.tp));
  std::int64_t params = stage.n_layers * (ceil_div(per_layer - kv_all, shape.tp) + kv_rank);
  const std::int64_t table_rank = ceil_div(s.vocab_size, shape.tp) * s.dim;
  if (stage.embeddings) params += table_rank;
  // A tied head is the embedding table itself unless the head sits on another stage.
  if (stage.output_head && (!s.tied_embeddings || !stage.embeddings)) params += table_rank;
  return params;
}

// ceil(params x total bytes / n_params): the model's bytes per parameter, kept exact.
std::int64_t bytes_for_params(std::int64_t params, const WeightFootprint& all,
                              std::int64_t n_params) {
  const Int128 num = static_cast<Int128>(params) * all.bytes + (n_params - 1);
  return static_cast<std::int64_t>(num / n_params);
}

// The shape one GPU of the stage computes with: its layers, heads and FFN columns.
ModelSpec rank_spec(const ModelSpec& s, const ParallelShape& shape, const PipelineStage& stage) {
  ModelSpec r = s;
  r.n_layers = stage.n_layers;
  r.n_heads = s.n_heads / shape.tp;
  r.n_kv_heads = kv_heads_per_rank(s.n_kv_heads, shape.tp);
  r.ffn_dim = ceil_div(s.ffn_dim, shape.tp);
  return r;
}

StagePlan plan_stage(const ParallelRequest& req, const PipelineStage& stage) {
  const PlanRequest& base = req.base;
  StagePlan sp;
  sp.stage = stage;
  sp.weight_params = rank_params(base.spec, req.n_params, req.shape, stage);
  sp.request = base;
  sp.request.spec = rank_spec(base.spec, req.shape, stage);
  sp.request.weights.bytes = bytes_for_params(sp.weight_params, base.weights, req.n_params);
  sp.request.weights.read_per_token = sp.request.weights.bytes;
  sp.request.weights.basis = base.weights.basis;
  sp.request.kv = serving_kv_config(base.spec, stage.n_layers, sp.request.spec.n_kv_heads,
                                    req.kv_dtype, base.kv.block_size);
  sp.request.kv.max_context = base.kv.max_context;
  sp.plan = plan_memory(sp.request);
  return sp;
}

}  // namespace

void validate_parallel_shape(const ModelSpec& spec, const ParallelShape& s) {
  if (s.tp < 1 || s.pp < 1) {
    throw_error<UsageError>("parallel plan: tp {} and pp {} must be >= 1", s.tp, s.pp);
  }
  if (s.tp > kMaxNodeGpus) {
    throw_error<UsageError>(
        "parallel plan: tp {} exceeds the {} GPUs of a node (tensor parallel "
        "stays inside one node's NVLink)",
        s.tp, kMaxNodeGpus);
  }
  if (s.node_gpus < 0 || s.node_gpus > kMaxNodeGpus) {
    throw_error<UsageError>("parallel plan: a node of {} GPUs (1 to {})", s.node_gpus,
                            kMaxNodeGpus);
  }
  const std::int64_t node = s.node_gpus > 0 ? s.node_gpus : kMaxNodeGpus;
  if (s.tp * s.pp > node) {
    throw_error<UsageError>("parallel plan: tp {} x pp {} = {} GPUs, more than the node's {}", s.tp,
                            s.pp, s.tp * s.pp, node);
  }
  if (spec.n_heads % s.tp != 0) {
    throw_error<UsageError>("parallel plan: tp {} does not divide the model's {} attention heads",
                            s.tp, spec.n_heads);
  }
  if (spec.n_kv_heads % s.tp != 0 && s.tp % spec.n_kv_heads != 0) {
    throw_error<UsageError>(
        "parallel plan: tp {} and the model's {} KV heads do not divide one another", s.tp,
        spec.n_kv_heads);
  }
  if (s.pp > spec.n_layers) {
    throw_error<UsageError>("parallel plan: pp {} exceeds the model's {} layers", s.pp,
                            spec.n_layers);
  }
}

std::int64_t kv_heads_per_rank(std::int64_t n_kv_heads, std::int64_t tp) {
  return std::max<std::int64_t>(1, n_kv_heads / tp);
}

std::vector<PipelineStage> pipeline_stages(std::int64_t n_layers, std::int64_t pp) {
  if (pp < 1 || pp > n_layers) {
    throw_error<UsageError>("pipeline stages: pp {} outside [1, {}]", pp, n_layers);
  }
  std::vector<std::int64_t> sizes(static_cast<std::size_t>(pp), n_layers / pp);
  // vLLM's get_pp_indices: the leftover layers go to partitions[-2], [-3], ...
  for (std::int64_t i = 0; i < n_layers % pp; ++i) ++sizes[static_cast<std::size_t>(pp - 2 - i)];
  std::vector<PipelineStage> stages;
  std::int64_t first = 0;
  for (std::int64_t i = 0; i < pp; ++i) {
    const std::int64_t n = sizes[static_cast<std::size_t>(i)];
    stages.push_back({first, n, i == 0, i == pp - 1});
    first += n;
  }
  return stages;
}

ParallelPlan plan_parallel(const ParallelRequest& request) {
  validate_parallel_shape(request.base.spec, request.shape);
  if (request.n_params < 1) {
    throw_error<UsageError>("parallel plan: parameter count {} must be >= 1", request.n_params);
  }
  ParallelPlan p;
  p.shape = request.shape;
  p.kv_heads_per_rank = kv_heads_per_rank(request.base.spec.n_kv_heads, request.shape.tp);
  p.kv_blocks = std::numeric_limits<std::int64_t>::max();
  p.fits = true;
  for (const PipelineStage& stage : pipeline_stages(request.base.spec.n_layers, request.shape.pp)) {
    StagePlan sp = plan_stage(request, stage);
    p.kv_blocks = std::min(p.kv_blocks, sp.plan.kv_blocks_per_group);
    p.node_bytes_needed += request.shape.tp * sp.plan.total_needed;
    p.fits = p.fits && sp.plan.fits;
    p.stages.push_back(std::move(sp));
  }
  p.kv_tokens = p.kv_blocks * request.base.kv.block_size;
  return p;
}

}  // namespace kvscope
