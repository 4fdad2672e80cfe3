#include "remote/kv_prediction.h"

#include "plan/parallel_plan.h"
#include "plan/weight_footprint.h"

namespace kvscope {

PlannedPool plan_server_pool(const ModelPreset& model, const GpuPreset& gpu,
                             const PoolQuestion& q) {
  const WeightFootprint weights = preset_weights(model.spec, model.n_params, WeightType::F16);
  ParallelRequest r;
  r.base = make_plan_request(model.spec, weights, KvDtype::F16, KvDtype::F16, q.block_size);
  r.base.batch = q.max_num_seqs;
  r.base.context = q.context > 0 ? q.context : model.spec.context_length;
  r.base.budget.total_bytes = gpu.memory_bytes;
  r.base.budget.utilisation = q.utilisation;
  r.n_params = model.n_params;
  r.shape.tp = q.tp;
  r.shape.pp = q.pp;
  r.kv_dtype = q.kv_dtype;
  const ParallelPlan plan = plan_parallel(r);
  PlannedPool out;
  out.model = model.slug;
  out.gpu = gpu.slug;
  out.question = q;
  out.blocks = plan.kv_blocks;
  out.tokens = plan.kv_tokens;
  out.fits = plan.kv_blocks > 0;
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
  return c;
}

}  // namespace kvscope
