#include "run/plan_check.h"

#include <algorithm>

#include "plan/solvers.h"
#include "plan/weight_footprint.h"
#include "run/engine.h"
#include "run/layer_split.h"
#include "run/split_backend.h"
#include "util/error.h"

namespace kvscope {

namespace {

// A split's pools as the planner predicts them (Engine::size_split_pools): n blocks in every
// group of kv, n from the planner's split (split_pool_blocks), and the exact tail's copies if
// any; at least 1 byte, so that no block at all still reads as a KV budget.
std::int64_t split_pools_budget(const Engine& engine, const KvCacheConfig& kv) {
  const LayerSplitPlan plan = plan_layer_split(engine_split_request(engine));
  const std::int64_t n = split_pool_blocks(plan.kv_blocks_per_group, engine.options());
  return std::max<std::int64_t>(1, kv_group_pools_bytes(kv, n) + kv_exact_tail_bytes(kv));
}

}  // namespace

LayerSplitRequest engine_split_request(const Engine& engine) {
  if (engine.split_gpu_layers() == 0) {
    throw_error<UsageError>("the engine is not split: it runs the whole model on {}",
                            engine.backend().name());
  }
  const EngineOptions& o = engine.options();
  const DeviceMemory device = engine.backend().device_memory().value_or(DeviceMemory{});
  LayerSplitRequest r = layer_split_request(
      engine.model(), o, gpu_memory_budget(o, device.total, device.used_by_others),
      engine.backend().cuda_plan_options().value_or(CudaWorkspaceOptions{}));
  r.gpu_layers = o.gpu_layers >= 0 ? std::min(o.gpu_layers, engine.spec().n_layers) : -1;
  return r;
}

LayerSplitPlan engine_split_plan(const Engine& engine, std::int64_t context,
                                 double gpu_bandwidth_gb_s, double cpu_bandwidth_gb_s) {
  LayerSplitRequest r = engine_split_request(engine);
  r.gpu_layers = engine.split_gpu_layers();
  r.plan.batch = 1;
  r.plan.context = context;
  r.gpu_bandwidth_gb_s = gpu_bandwidth_gb_s;
  r.cpu_bandwidth_gb_s = cpu_bandwidth_gb_s;
  return plan_layer_split(r);
}

PlanRequest engine_plan_request(const Engine& engine) {
  const KvCacheManager& kv = engine.kv_cache();
  const EngineOptions& o = engine.options();
  PlanRequest r;
  r.spec = engine.spec();
  r.weights = model_weights(engine.model());
  r.kv = kv.config();  // with the engine's exact tail, if any
  r.kv.budget_bytes = 0;
  r.kv.n_blocks = 0;
  r.exact_tail_blocks = 0;
  r.batch = 1;
  r.prefill_chunk = o.scheduler.max_batch_tokens;
  r.backend = kv.bytes().has_host_storage() ? PlanBackend::Cpu : PlanBackend::Cuda;
  r.cuda = engine.backend().cuda_plan_options().value_or(CudaWorkspaceOptions{});
  r.engine_context = kv.config().max_context;
  if (o.kv_budget_bytes > 0) {
    r.kv_budget_bytes = static_cast<std::int64_t>(o.kv_budget_bytes);
  } else if (engine.split_gpu_layers() > 0) {
    r.kv_budget_bytes = split_pools_budget(engine, r.kv);
  } else if (o.memory_budget_bytes > 0) {
    r.budget = {static_cast<std::int64_t>(o.memory_budget_bytes), o.memory_utilisation, 0};
  } else {
    std::int64_t pools = 0;
    for (std::int64_t g = 0; g < kv.n_groups(); ++g) {
      pools += kv.pool(g).n_blocks() * kv.layout(g).block_bytes();
    }
    r.kv_budget_bytes = pools + kv_exact_tail_bytes(kv.config());
  }
  return r;
}

namespace {

// Grows `seq` the way prefill does, a chunk at a time, until the context is full or the
// pool refuses; the last chunk is the largest that still fits.
void fill(KvCacheManager& kv, SeqId seq, std::int64_t chunk) {
  const std::int64_t ctx = kv.config().max_context;
  while (kv.n_tokens(seq) < ctx) {
    std::int64_t n = std::min(chunk, ctx - kv.n_tokens(seq));
    if (!kv.can_grow(seq, n)) {
      std::int64_t lo = 0, hi = n;  // can_grow(lo) holds, can_grow(hi) does not
      while (hi - lo > 1) {
        const std::int64_t mid = lo + (hi - lo) / 2;
        (kv.can_grow(seq, mid) ? lo : hi) = mid;
      }
      n = lo;
    }
    if (n == 0) return;
    kv.grow(seq, n);
  }
}

// Bytes of the blocks in use (used) or of the whole pool with the exact tail's copies, over
// every group (the planner's held_bytes and kv_pool_bytes).
std::int64_t group_bytes(const KvCacheManager& kv, bool used) {
  std::int64_t bytes = used ? 0 : kv_exact_tail_bytes(kv.config());
  for (std::int64_t g = 0; g < kv.n_groups(); ++g) {
    const KvUsage u = kv.usage(g);
    bytes += (used ? u.n_used : u.n_blocks) * kv.layout(g).block_bytes();
  }
  return bytes;
}

// Bytes of the plan's pools of one side's layer groups (on_device: the GPU's).
std::int64_t side_pool_bytes(const MemoryPlan& plan, const KvCacheConfig& kv, bool gpu) {
  std::int64_t bytes = 0;
  for (std::size_t g = 0; g < kv.groups.size(); ++g) {
    if (kv.groups[g].on_device != gpu) continue;
    bytes += plan.kv_group_blocks[g] * kv_group_layout(kv, g).block_bytes();
  }
  return bytes;
}

// The planner's split beside the engine's: layers, and each side's weights and pools.
SplitCheck check_split(const Engine& engine, const MemoryPlan& plan, const KvCacheConfig& kv) {
  SplitCheck c;
  c.plan = plan_layer_split(engine_split_request(engine));
  const SplitMemory m = *engine.split_memory();
  c.gpu_layers = m.gpu_layers;
  c.gpu = {c.plan.gpu.weights, static_cast<std::int64_t>(m.gpu.weights),
           side_pool_bytes(plan, kv, true), static_cast<std::int64_t>(m.gpu.kv_pool)};
  c.cpu = {c.plan.cpu.weights, static_cast<std::int64_t>(m.cpu.weights),
           side_pool_bytes(plan, kv, false), static_cast<std::int64_t>(m.cpu.kv_pool)};
  return c;
}

}  // namespace

PlanCheck check_plan(Engine& engine) {
  if (!engine.idle()) {
    throw_error<UsageError>("the plan can be checked only while no reply is being generated");
  }
  engine.release_all_caches();
  KvCacheManager& kv = *engine.kv_;

  PlanRequest request = engine_plan_request(engine);
  PlanCheck check;
  check.planned_max_context = max_context(request).tokens;
  request.context = std::max<std::int64_t>(1, check.planned_max_context);
  check.plan = plan_memory(request);
  check.predicted_pool_bytes = check.plan.kv_pool_bytes;
  check.predicted_used_bytes = check.plan.kv.held_bytes;
  check.allocated_pool_bytes = group_bytes(kv, false);

  const SeqId seq = engine.next_eval_seq_--;
  kv.add_sequence(seq);
  try {
    fill(kv, seq, request.prefill_chunk);
    check.reached_tokens = kv.n_tokens(seq);
    check.next_token_refused = !kv.can_grow(seq, 1);
    check.allocated_used_bytes = group_bytes(kv, true);
    check.memory = engine.memory_info();
    if (engine.split_gpu_layers() > 0) check.split = check_split(engine, check.plan, request.kv);
  } catch (...) {
    kv.free_sequence(seq);
    throw;
  }
  kv.free_sequence(seq);
  return check;
}

}  // namespace kvscope
