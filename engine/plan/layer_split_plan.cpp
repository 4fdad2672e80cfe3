#include "plan/layer_split_plan.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "model/model.h"
#include "plan/cuda_workspace.h"
#include "plan/kv_footprint.h"
#include "plan/model_layer_groups.h"
#include "util/error.h"

namespace kvscope {

namespace {

// One side's groups of the request's cache split at k (on_device: the GPU's).
KvCacheConfig side_groups(const PlanRequest& plan, std::int64_t gpu_layers, bool gpu) {
  KvCacheConfig c = plan.kv;
  c.groups = split_layer_groups(plan.kv.groups, gpu_layers);
  std::erase_if(c.groups, [gpu](const LayerGroupConfig& g) { return g.on_device != gpu; });
  c.max_context = plan.context;
  c.exact_tail_blocks = 0;  // a split keeps no exact tail unless asked (engine.cpp)
  c.exact_tail_shadows = 0;
  return c;
}

// batch sequences of `context` tokens in every group (a window group its cap)
std::int64_t side_kv_bytes(const PlanRequest& plan, const KvCacheConfig& side) {
  if (side.groups.empty()) return 0;
  const std::int64_t blocks = plan.batch * ((plan.context + side.block_size - 1) / side.block_size);
  return kv_group_pools_bytes(side, blocks);
}

std::int64_t side_kv_read(const PlanRequest& plan, const KvCacheConfig& side) {
  return side.groups.empty() ? 0 : plan.batch * kv_bytes_read_per_token(side, plan.context);
}

}  // namespace

std::int64_t split_gpu_kv_bytes(const PlanRequest& plan, std::int64_t gpu_layers) {
  return side_kv_bytes(plan, side_groups(plan, gpu_layers, true));
}

Workspace split_gpu_workspace(const PlanRequest& plan, std::int64_t gpu_layers) {
  const ModelSpec& spec = plan.spec;
  const bool part = gpu_layers < spec.n_layers;
  // the engine's positions (its RoPE and block tables), and every group of the split cache:
  // a step's tables carry each group's block tables, the CPU's too
  KvCacheConfig kv = plan.kv;
  kv.groups = split_layer_groups(plan.kv.groups, gpu_layers);
  kv.max_context = plan_engine_context(plan);
  kv.exact_tail_blocks = 0;  // a split keeps no exact tail unless asked (engine.cpp)
  CudaWorkspaceOptions o = plan.cuda;
  // a part holds no output head: its fp16 slab is its layers' largest projection's
  if (part && o.gemm_slab_bytes < 0) o.gemm_slab_bytes = cuda_layer_slab_bytes(spec);
  Workspace w = workspace_for(spec, plan.batch, plan.prefill_chunk, PlanBackend::Cuda, kv, o);
  if (!part) return w;
  // The rows' buffers grow with the rows alone, and every step of the plan has at most batch
  // rows: they are what a step of batch tokens holds with its rows beside without them.
  CudaStepShape rows;
  rows.n_tokens = plan.batch;
  rows.n_rows = plan.batch;
  CudaStepShape no_rows = rows;
  no_rows.n_rows = 0;
  const std::int64_t rows_bytes = total_bytes(cuda_step_buffers(spec, o, rows)) -
                                  total_bytes(cuda_step_buffers(spec, o, no_rows));
  w.activations -= rows_bytes - w.logits;  // the logits are counted on their own
  w.logits = 0;
  return w;
}

void set_even_layer_bytes(LayerSplitRequest& r, double bytes_per_param) {
  const ModelSpec& spec = r.plan.spec;
  r.embedding_bytes = static_cast<std::int64_t>(
      std::ceil(static_cast<double>(spec.vocab_size * spec.dim) * bytes_per_param));
  r.output_bytes = spec.tied_embeddings ? 0 : r.embedding_bytes;
  const std::int64_t n = spec.n_layers;
  const std::int64_t layers =
      std::max<std::int64_t>(0, r.plan.weights.bytes - r.embedding_bytes - r.output_bytes);
  r.layer_bytes.assign(static_cast<std::size_t>(n), layers / n);
  r.layer_bytes.back() += layers % n;
}

void set_preset_layer_bytes(LayerSplitRequest& r, WeightType type) {
  set_even_layer_bytes(r, weight_type_info(type).bits_per_weight / 8.0);
}

void set_model_layer_bytes(LayerSplitRequest& r, const Model& model) {
  r.layer_bytes.clear();
  for (std::int64_t l = 0; l < model.spec().n_layers; ++l) {
    r.layer_bytes.push_back(static_cast<std::int64_t>(model.weight_bytes(l, l + 1, false, false)));
  }
  r.embedding_bytes = static_cast<std::int64_t>(model.weight_bytes(0, 0, true, false));
  r.output_bytes =
      static_cast<std::int64_t>(model.weight_bytes(0, 0, true, true)) - r.embedding_bytes;
}

LayerSplitPlan plan_layer_split(const LayerSplitRequest& r) {
  const auto n = static_cast<std::int64_t>(r.layer_bytes.size());
  if (n != r.plan.spec.n_layers) {
    throw_error<UsageError>("layer split: {} layer sizes for a model of {} layers", n,
                            r.plan.spec.n_layers);
  }
  if (r.gpu_layers < -1 || r.gpu_layers > n) {
    throw_error<UsageError>("layer split: {} layers on the GPU of {} (-1: the most that fit)",
                            r.gpu_layers, n);
  }
  const PlanRequest& p = r.plan;
  const Workspace cpu_ws = workspace_for(p.spec, p.batch, p.prefill_chunk, PlanBackend::Cpu);
  const auto layers_bytes = [&](std::int64_t begin, std::int64_t end) {
    return std::accumulate(r.layer_bytes.begin() + begin, r.layer_bytes.begin() + end,
                           std::int64_t{0});
  };
  const auto plan_at = [&](std::int64_t k) {
    const Workspace gpu_ws = split_gpu_workspace(p, k);
    LayerSplitPlan s;
    s.n_layers = n;
    s.gpu_layers = k;
    s.gpu_usable = p.budget.usable();
    if (k > 0) {
      const std::int64_t extra = k == n ? r.embedding_bytes + r.output_bytes : 0;
      s.gpu = {layers_bytes(0, k) + extra, split_gpu_kv_bytes(p, k), gpu_ws.total()};
    }
    if (k < n) {
      s.cpu = {r.embedding_bytes + layers_bytes(k, n) + r.output_bytes,
               side_kv_bytes(p, side_groups(p, k, false)), cpu_ws.total()};
    }
    // kv_budget_from's test, as the engine sizes the GPU's pools: the KV within what the
    // budget leaves after weights and workspace
    s.fits = k == 0 || s.gpu.kv <= kv_budget_from(p.budget, s.gpu.weights, gpu_ws);
    return s;
  };
  LayerSplitPlan s = plan_at(r.gpu_layers >= 0 ? r.gpu_layers : 0);
  if (r.gpu_layers < 0) {
    for (std::int64_t k = n; k > 0; --k) {
      if (LayerSplitPlan at = plan_at(k); at.fits) {
        s = at;
        break;
      }
    }
  }
  if (s.fits && s.gpu_layers > 0) {  // the engine's pools (run/layer_split.h)
    const Workspace gpu_ws = split_gpu_workspace(p, s.gpu_layers);
    KvCacheConfig gpu = side_groups(p, s.gpu_layers, true);
    gpu.budget_bytes = kv_budget_from(p.budget, s.gpu.weights, gpu_ws);
    gpu.n_blocks = 0;
    s.kv_blocks_per_group = kv_blocks_per_group(gpu);
    s.gpu.kv_pool = kv_group_pools_bytes(gpu, s.kv_blocks_per_group);
    const KvCacheConfig cpu = side_groups(p, s.gpu_layers, false);
    if (!cpu.groups.empty()) s.cpu.kv_pool = kv_group_pools_bytes(cpu, s.kv_blocks_per_group);
  }
  const std::int64_t k = s.gpu_layers;
  // a decode step reads every weight but an untied token table, of which it reads the token's
  // row (tied, the table is the output head and read whole, on the side that holds it), as
  // the whole model's WeightFootprint::read_per_token counts it
  const std::int64_t table_row =
      p.spec.vocab_size > 0 ? r.embedding_bytes / p.spec.vocab_size : r.embedding_bytes;
  const std::int64_t table_skipped = p.spec.tied_embeddings ? 0 : r.embedding_bytes - table_row;
  const std::int64_t gpu_weights_read = k == n ? s.gpu.weights - table_skipped : s.gpu.weights;
  const std::int64_t cpu_weights_read = k < n ? s.cpu.weights - table_skipped : 0;
  s.gpu_bytes_per_step = k > 0 ? gpu_weights_read + side_kv_read(p, side_groups(p, k, true)) : 0;
  s.cpu_bytes_per_step = k < n ? cpu_weights_read + side_kv_read(p, side_groups(p, k, false)) : 0;
  if (r.gpu_bandwidth_gb_s > 0.0 && r.cpu_bandwidth_gb_s > 0.0) {
    s.seconds_per_step = static_cast<double>(s.gpu_bytes_per_step) / (r.gpu_bandwidth_gb_s * 1e9) +
                         static_cast<double>(s.cpu_bytes_per_step) / (r.cpu_bandwidth_gb_s * 1e9);
    if (s.seconds_per_step > 0.0) {
      s.tokens_per_s = static_cast<double>(p.batch) / s.seconds_per_step;
    }
  }
  return s;
}

}  // namespace kvscope
