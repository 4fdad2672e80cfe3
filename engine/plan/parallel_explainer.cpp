#include "plan/parallel_explainer.h"

#include <fmt/format.h>

#include "plan/units.h"

namespace kvscope {

namespace {

std::string bytes(std::int64_t b) {
  return fmt::format("{} B ({})", group_digits(b), human_bytes(b));
}

void explain_split(std::string& out, const ParallelRequest& r, const ParallelPlan& p) {
  const ModelSpec& s = r.base.spec;
  out += fmt::format("Split: tensor parallel {} x pipeline parallel {} = {} GPUs\n", p.shape.tp,
                     p.shape.pp, p.shape.gpus());
  out += fmt::format("  attention heads per GPU = {} / {} = {}\n", s.n_heads, p.shape.tp,
                     s.n_heads / p.shape.tp);
  out += fmt::format(
      "  KV heads per GPU = max(1, {} / {}) = {}{}\n", s.n_kv_heads, p.shape.tp,
      p.kv_heads_per_rank,
      p.shape.tp > s.n_kv_heads
          ? " (each KV head replicated on " + std::to_string(p.shape.tp / s.n_kv_heads) + " GPUs)"
          : "");
}

void explain_stage_kv(std::string& out, const ParallelRequest& r, const StagePlan& sp) {
  const MemoryPlan& m = sp.plan;
  const std::int64_t bs = sp.request.kv.block_size;
  const std::int64_t per_token_layer = m.kv_block_set_bytes / (bs * sp.stage.n_layers);
  out += fmt::format("  KV per token per layer = {} KV heads x 2 (K, V) x {} x {} B ({}) = {} B\n",
                     sp.request.spec.n_kv_heads, r.base.spec.head_dim,
                     serving_kv_element_bytes(r.kv_dtype), serving_kv_dtype_name(r.kv_dtype),
                     group_digits(per_token_layer));
  out += fmt::format("  one block = {} tokens x {} layers x {} B = {}\n", bs, sp.stage.n_layers,
                     group_digits(per_token_layer), bytes(m.kv_block_set_bytes));
  out += fmt::format("  KV needed = {} sequences x {} blocks x {} B = {}\n",
                     group_digits(r.base.batch),
                     group_digits(m.kv.blocks_per_group_needed / r.base.batch),
                     group_digits(m.kv_block_set_bytes), bytes(m.kv.pool_bytes_needed));
}

std::string verdict(const StagePlan& sp) {
  const MemoryPlan& m = sp.plan;
  if (!m.within_context) {
    return fmt::format("does not fit, the context {} exceeds the model's {}",
                       group_digits(sp.request.context), group_digits(sp.request.kv.max_context));
  }
  return m.fits ? std::string("fits") : fmt::format("{} short", human_bytes(-m.margin_bytes));
}

void explain_stage(std::string& out, const ParallelRequest& r, const ParallelPlan& p,
                   std::size_t i) {
  const StagePlan& sp = p.stages[i];
  const MemoryPlan& m = sp.plan;
  out += fmt::format(
      "Stage {}: layers {}-{}{}{}, on each of {} GPU{}\n", i, sp.stage.first_layer,
      sp.stage.first_layer + sp.stage.n_layers - 1, sp.stage.embeddings ? ", token embedding" : "",
      sp.stage.output_head ? ", output head" : "", p.shape.tp, p.shape.tp == 1 ? "" : "s");
  out += fmt::format("  weights = {} of {} parameters x {} B / {} = {}\n",
                     group_digits(sp.weight_params), group_digits(r.n_params),
                     group_digits(r.base.weights.bytes), group_digits(r.n_params),
                     bytes(m.weights.bytes));
  explain_stage_kv(out, r, sp);
  out += fmt::format("  workspace = {}\n", bytes(m.workspace.total()));
  out += fmt::format("  usable = {} B x {:.2f} - {} B used by others = {}\n",
                     group_digits(sp.request.budget.total_bytes), sp.request.budget.utilisation,
                     group_digits(sp.request.budget.used_by_others), bytes(m.usable_bytes));
  out += fmt::format("  KV pool = floor(({} - weights - workspace) / {} B) = {} blocks\n",
                     group_digits(m.usable_bytes), group_digits(m.kv_block_set_bytes),
                     group_digits(m.kv_blocks_per_group));
  out += fmt::format("  per GPU: weights {} + workspace {} + KV {} = {} of {}: {}\n",
                     human_bytes(m.weights.bytes), human_bytes(m.workspace.total()),
                     human_bytes(m.kv.pool_bytes_needed), human_bytes(m.total_needed),
                     human_bytes(m.usable_bytes), verdict(sp));
}

}  // namespace

std::string explain_parallel(const ParallelRequest& r, const ParallelPlan& p) {
  std::string out;
  explain_split(out, r, p);
  for (std::size_t i = 0; i < p.stages.size(); ++i) explain_stage(out, r, p, i);
  out += fmt::format("Node KV capacity = min over stages {} blocks x {} = {} tokens\n",
                     group_digits(p.kv_blocks), r.base.kv.block_size, group_digits(p.kv_tokens));
  out += fmt::format("Node total = {} across {} GPUs: {}\n", bytes(p.node_bytes_needed),
                     p.shape.gpus(), p.fits ? "fits" : "does not fit");
  return out;
}

}  // namespace kvscope
