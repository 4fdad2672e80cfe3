#include "remote/kv_prediction.h"

#include "plan/vllm_explainer.h"

namespace kvscope {

PlannedPool plan_server_pool(const ModelPreset& model, const GpuPreset& gpu,
                             const PoolQuestion& q) {
  VllmRequest r;
  r.spec = model.spec;
  r.weights = q.weights;
  r.version = q.version;
  r.total_gpu_memory = reported_gpu_memory(gpu.memory_bytes);
  r.gpu_memory_utilization = q.utilisation;
  r.tp = q.tp;
  r.pp = q.pp;
  r.max_model_len = q.context;
  r.max_num_seqs = q.max_num_seqs;
  r.kv_dtype = q.kv_dtype;
  r.block_size = q.block_size;
  const VllmMemoryPlan plan = plan_vllm_memory(r);
  PlannedPool out;
  out.model = model.slug;
  out.gpu = gpu.slug;
  out.question = q;
  out.blocks = plan.gpu_blocks;
  out.tokens = plan.kv_tokens;
  out.fits = plan.gpu_blocks > 0;
  out.formula = explain_vllm_memory(plan);
  return out;
}

KvComparison compare_kv(const ServerSample& sample, std::optional<double> kv_tokens,
                        const PlannedPool& plan) {
  KvComparison c;
  if (sample.kv_usage) c.live_pct = 100.0 * *sample.kv_usage;
  c.tokens = kv_tokens;
  c.server_pool_tokens = sample.kv_pool_tokens();
  if (c.tokens && plan.tokens > 0)
    c.planned_pct = 100.0 * *c.tokens / static_cast<double>(plan.tokens);
  if (c.server_pool_tokens && plan.tokens > 0) {
    c.pool_ratio = static_cast<double>(*c.server_pool_tokens) / static_cast<double>(plan.tokens);
  }
  if (c.server_pool_tokens && *c.server_pool_tokens > 0) {
    c.pool_difference_pct =
        100.0 *
        (static_cast<double>(plan.tokens) / static_cast<double>(*c.server_pool_tokens) - 1.0);
  }
  return c;
}

}  // namespace kvscope
