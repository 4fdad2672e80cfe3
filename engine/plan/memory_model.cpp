#include "plan/memory_model.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "plan/exact_tail_rule.h"
#include "util/error.h"

namespace kvscope {

namespace {

constexpr std::int64_t kMaxBatch = std::int64_t{1} << 20;
constexpr std::int64_t kMaxTokens = std::int64_t{1} << 30;
constexpr std::int64_t kMaxBytes = std::int64_t{1} << 56;
constexpr std::int64_t kMiB = std::int64_t{1} << 20;

void check_range(std::string_view field, std::int64_t value, std::int64_t min, std::int64_t max) {
  if (value < min || value > max) {
    throw_error<UsageError>("plan: {} is {}, outside [{}, {}]", field, value, min, max);
  }
}

void validate_request(const PlanRequest& r) {
  check_range("batch", r.batch, 1, kMaxBatch);
  check_range("context", r.context, 1, kMaxTokens);
  check_range("engine context", r.engine_context, 0, kMaxTokens);
  check_range("prefill chunk", r.prefill_chunk, 1, kMaxTokens);
  check_range("used-by-others bytes", r.budget.used_by_others, 0, kMaxBytes);
  check_range("KV budget", r.kv_budget_bytes, 0, kMaxBytes);
  if (r.kv_budget_bytes == 0) check_range("memory size", r.budget.total_bytes, 1, kMaxBytes);
  const double u = r.budget.utilisation;
  if (!std::isfinite(u) || u <= 0.0 || u > 1.0) {
    throw_error<UsageError>("plan: utilisation {} must be in (0, 1]", u);
  }
  check_range("weight bytes", r.weights.bytes, 0, kMaxBytes);
  // The allocator's own checks (groups, layers, windows, block size, max_context), run on
  // a copy with a placeholder pool size since the plan computes the real one.
  KvCacheConfig shape = r.kv;
  shape.budget_bytes = 0;
  shape.n_blocks = 1;
  validate(shape);
}

}  // namespace

std::string_view plan_backend_name(PlanBackend backend) {
  return backend == PlanBackend::Cuda ? "cuda" : "cpu";
}

std::int64_t backend_overhead_bytes(PlanBackend backend) {
  return backend == PlanBackend::Cuda ? 512 * kMiB : 0;
}

Workspace workspace_for(const ModelSpec& spec, std::int64_t batch, std::int64_t prefill_chunk,
                        PlanBackend backend) {
  KvCacheConfig kv;
  kv.max_context = spec.context_length;
  return workspace_for(spec, batch, prefill_chunk, backend, kv, CudaWorkspaceOptions{});
}

std::vector<CudaBuffer> cuda_plan_buffers(const ModelSpec& spec, std::int64_t batch,
                                          std::int64_t prefill_chunk, const KvCacheConfig& kv,
                                          const CudaWorkspaceOptions& cuda) {
  CudaWorkspaceRequest r;
  r.max_step_tokens = std::max(batch, prefill_chunk);
  r.max_sequences = batch;
  r.logits_rows = batch;
  r.max_positions = kv.max_context > 0 ? kv.max_context : spec.context_length;
  r.block_size = kv.block_size;
  r.n_groups = std::max<std::int64_t>(1, static_cast<std::int64_t>(kv.groups.size()));
  for (std::size_t g = 0; g < kv.groups.size(); ++g) {
    if (kv_group_has_exact_tail(kv, g)) ++r.n_tail_groups;
  }
  return cuda_workspace_buffers(spec, cuda, r);
}

Workspace workspace_for(const ModelSpec& spec, std::int64_t batch, std::int64_t prefill_chunk,
                        PlanBackend backend, const KvCacheConfig& kv,
                        const CudaWorkspaceOptions& cuda) {
  check_range("batch", batch, 1, kMaxBatch);
  check_range("prefill chunk", prefill_chunk, 1, kMaxTokens);
  Workspace w;
  w.step_tokens = std::max(batch, prefill_chunk);
  w.logits = batch * spec.vocab_size * 4;
  w.backend = backend_overhead_bytes(backend);
  if (backend == PlanBackend::Cuda) {
    const std::vector<CudaBuffer> all = cuda_plan_buffers(spec, batch, prefill_chunk, kv, cuda);
    const std::size_t n_step = cuda_step_buffers(spec, cuda, {}).size();
    for (std::size_t i = 0; i < all.size(); ++i) {
      (i < n_step ? w.activations : w.buffers) += all[i].bytes;
    }
    w.activations -= w.logits;  // the step buffers' logits are batch rows too
    return w;
  }
  // Each width is < 2^22 (ModelSpec limits), step_tokens < 2^31: no overflow.
  const std::int64_t per_token_floats =
      3 * spec.dim + 2 * spec.q_dim() + 2 * spec.kv_dim() + 2 * spec.ffn_dim + spec.rope_dim;
  w.activations = w.step_tokens * per_token_floats * 4;
  return w;
}

std::int64_t MemoryBudget::usable() const {
  const auto share =
      static_cast<std::int64_t>(std::floor(static_cast<double>(total_bytes) * utilisation));
  return share - used_by_others;
}

std::int64_t kv_budget_from(const MemoryBudget& budget, std::int64_t weight_bytes,
                            const Workspace& workspace) {
  return std::max<std::int64_t>(0, budget.usable() - weight_bytes - workspace.total());
}

PlanRequest make_plan_request(const ModelSpec& spec, WeightFootprint weights, KvDtype k_dtype,
                              KvDtype v_dtype, std::int64_t block_size) {
  PlanRequest r;
  r.spec = spec;
  r.weights = std::move(weights);
  r.kv = default_kv_config(spec, k_dtype, v_dtype, block_size);
  r.context = spec.context_length;
  return r;
}

namespace {

// The exact tail's blocks the engine gives r's cache (PlanRequest::exact_tail_blocks).
std::int64_t tail_as_built(const PlanRequest& r) {
  if (r.exact_tail_blocks >= 0) return r.exact_tail_blocks;
  return r.backend == PlanBackend::Cpu ? kDefaultExactTailBlocks : 0;
}

// r.kv with the window pools and the exact tail the engine would give it under a KV budget
// of kv_budget bytes. Window pools: as the request's cache has them (an engine's own), else
// for the batch or the engine's default sequences, whichever is more, grown a chunk at a time.
KvCacheConfig cache_as_built(const PlanRequest& r, std::int64_t kv_budget) {
  KvCacheConfig kv = with_window_pools(r.kv, r.batch, r.prefill_chunk);
  const std::int64_t tail = tail_as_built(r);
  if (tail == 0) return kv;
  kv.budget_bytes = std::max<std::int64_t>(0, kv_budget);
  kv.n_blocks = 0;
  apply_exact_tail(kv, tail, kExactTailSequences, r.prefill_chunk);
  kv.budget_bytes = 0;
  return kv;
}

// What the batch would need with every window ignored, as llama.cpp's --swa-full keeps
// it (0 when no group slides): the comparison the plan states for its windows' saving.
std::int64_t full_cache_bytes(const KvCacheConfig& kv, const PlanRequest& r) {
  KvCacheConfig full = kv;
  bool slides = false;
  for (LayerGroupConfig& g : full.groups) {
    slides = slides || g.window > 0;
    g.window = 0;
  }
  return slides ? kv_footprint(full, r.batch, r.context, r.prefill_chunk).pool_bytes_needed : 0;
}

}  // namespace

std::int64_t plan_engine_context(const PlanRequest& r) {
  return r.engine_context > 0 ? r.engine_context : r.context;
}

MemoryPlan plan_memory(const PlanRequest& r) {
  validate_request(r);
  MemoryPlan p;
  p.weights = r.weights;
  // the workspace's step tables hold the exact tail's shadow indices (cuda_step_table_ints),
  // its RoPE and block tables the engine's positions
  KvCacheConfig tables_kv = r.kv;
  if (tail_as_built(r) > 0) tables_kv.exact_tail_blocks = tail_as_built(r);
  tables_kv.max_context = plan_engine_context(r);
  p.workspace = workspace_for(r.spec, r.batch, r.prefill_chunk, r.backend, tables_kv, r.cuda);
  p.kv_bytes_per_token = kv_bytes_per_token(r.kv);
  p.kv_block_set_bytes = kv_block_set_bytes(r.kv);

  const std::int64_t fixed = p.weights.bytes + p.workspace.total();
  if (r.kv_budget_bytes > 0) {
    p.usable_bytes = r.kv_budget_bytes;
    p.kv_budget_bytes = r.kv_budget_bytes;
  } else {
    p.usable_bytes = r.budget.usable();
    p.kv_budget_bytes = kv_budget_from(r.budget, p.weights.bytes, p.workspace);
  }
  // The cache as the engine would build it: with the exact tail its backend gives it
  const KvCacheConfig kv = cache_as_built(r, p.kv_budget_bytes);
  p.kv = kv_footprint(kv, r.batch, r.context, r.prefill_chunk);
  p.kv_window_sequences = kv.window_sequences;
  p.kv_full_cache_bytes = full_cache_bytes(kv, r);
  // The allocator's sizing (kv_blocks_per_group): the exact tail's copies first, then n
  // blocks for every full group and at most its cap for a sliding-window group.
  const std::int64_t tail_bytes = kv_exact_tail_bytes(kv);
  p.kv_exact_tail_copies = tail_bytes > 0 ? kv.exact_tail_shadows : 0;
  p.kv_exact_tail_bytes = tail_bytes;
  KvCacheConfig budgeted = kv;
  budgeted.budget_bytes = std::max<std::int64_t>(1, p.kv_budget_bytes);
  budgeted.n_blocks = 0;
  const std::int64_t left = std::max<std::int64_t>(0, p.kv_budget_bytes - tail_bytes);
  p.kv_blocks_per_group = kv_group_pools_bytes(kv, 1) <= left ? kv_blocks_per_group(budgeted) : 0;
  p.kv_group_blocks = kv_group_pool_blocks(kv, p.kv_blocks_per_group);
  p.kv_pool_bytes = kv_group_pools_bytes(kv, p.kv_blocks_per_group) + tail_bytes;

  const std::int64_t kv_needed = p.kv.pool_bytes_needed;
  const std::int64_t others = r.kv_budget_bytes > 0 ? 0 : fixed;
  // Capped far above any real size so that the margin below cannot overflow.
  constexpr std::int64_t kCap = std::int64_t{1} << 62;
  p.total_needed = std::min(kCap, std::min(kCap, kv_needed) + others);
  p.margin_bytes = p.usable_bytes - p.total_needed;
  p.within_context = r.context <= r.kv.max_context;
  bool groups_fit = p.kv_budget_bytes > 0;
  for (std::size_t g = 0; g < p.kv.groups.size(); ++g) {
    groups_fit = groups_fit && p.kv.groups[g].peak_blocks <= p.kv_group_blocks[g];
  }
  p.fits = p.within_context && groups_fit;
  return p;
}

}  // namespace kvscope
