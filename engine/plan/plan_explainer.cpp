#include "plan/plan_explainer.h"

#include <fmt/format.h>

#include <cmath>

#include "kv/format/kv_format.h"
#include "plan/units.h"

namespace kvscope {

namespace {

std::string bytes(std::int64_t b) {
  return fmt::format("{} B ({})", group_digits(b), human_bytes(b));
}

// One K or V vector's bytes as its format builds them: "128 x 2 B", "128 B + 4 x 2 B scales",
// or for offset-int4 keys a scale and a minimum per group: "64 B + 4 x 2 x 2 B scales and mins".
std::string vector_formula(KvSide side, KvDtype dtype, std::int64_t head_dim) {
  if (dtype == KvDtype::F16) return fmt::format("{} x 2 B", head_dim);
  const std::int64_t data = kv_data_bytes_per_vector(dtype, head_dim);
  const std::int64_t scales = kv_scales_per_vector(side, dtype, head_dim);
  if (side == KvSide::K && dtype == KvDtype::Int4) {
    return fmt::format("{} B + {} x 2 x 2 B scales and mins", data, scales / 2);
  }
  return fmt::format("{} B + {} x 2 B scales", data, scales);
}

// "1,216" or "1,216.50": a per-token figure, fractional when a block's K offsets do not
// divide evenly among its slots.
std::string per_token_text(double bytes) {
  const long long cents = std::llround(bytes * 100.0);
  if (cents % 100 == 0) return group_digits(cents / 100);
  return fmt::format("{}.{:02d}", group_digits(cents / 100), cents % 100);
}

// "1 sequence", "3 sequences"
std::string sequences(std::int64_t n) {
  return fmt::format("{} sequence{}", n, n == 1 ? "" : "s");
}

std::string window_text(std::int64_t window) {
  return window > 0 ? fmt::format("sliding window of {} tokens", group_digits(window))
                    : std::string("full attention");
}

void explain_weights(std::string& out, const MemoryPlan& p) {
  out += fmt::format("Weights\n  {} = {}\n", p.weights.basis, bytes(p.weights.bytes));
}

// How many blocks one sequence of the group holds.
void explain_growth(std::string& out, const PlanRequest& r, const MemoryPlan& p, std::size_t g) {
  const LayerGroupConfig& group = r.kv.groups[g];
  const KvGroupFootprint& f = p.kv.groups[g];
  const std::int64_t per_seq = f.held_blocks / r.batch;
  if (group.window == 0) {
    out += fmt::format("    per sequence: ceil({} / {}) = {} blocks\n", group_digits(r.context),
                       r.kv.block_size, group_digits(per_seq));
  } else {
    out += fmt::format(
        "    per sequence: {} blocks at {} tokens, at most {} while growing {} tokens at a "
        "time (blocks wholly before the window are released)\n",
        group_digits(per_seq), group_digits(r.context), group_digits(f.peak_blocks / r.batch),
        group_digits(r.prefill_chunk));
  }
}

void explain_group(std::string& out, const PlanRequest& r, const MemoryPlan& p, std::size_t g) {
  const LayerGroupConfig& group = r.kv.groups[g];
  const KvGroupFootprint& f = p.kv.groups[g];
  const auto n_layers = static_cast<std::int64_t>(group.layers.size());
  const std::int64_t per_slot =
      kv_slot_bytes_per_layer(group.k_dtype, group.v_dtype, r.kv.n_kv_heads, r.kv.head_dim);
  const std::int64_t offsets =
      kv_block_offset_bytes_per_layer(group.k_dtype, r.kv.n_kv_heads, r.kv.head_dim);
  out += fmt::format("  group {}: {} layers, K {} / V {}, {}\n", g, n_layers,
                     kv_dtype_name(group.k_dtype), kv_dtype_name(group.v_dtype),
                     window_text(group.window));
  out +=
      fmt::format("    per token per layer = {} KV heads x (K {} + V {}) = {} B\n", r.kv.n_kv_heads,
                  vector_formula(KvSide::K, group.k_dtype, r.kv.head_dim),
                  vector_formula(KvSide::V, group.v_dtype, r.kv.head_dim), group_digits(per_slot));
  if (offsets == 0) {
    out += fmt::format("    one block = {} tokens x {} layers x {} B = {}\n", r.kv.block_size,
                       n_layers, group_digits(per_slot), bytes(f.block_bytes));
    explain_growth(out, r, p, g);
    return;
  }
  // offset int4 K: a block also holds, per layer and KV head, the fp16 offsets of its first key
  out += fmt::format("    K offsets per block per layer = {} KV heads x {} x 2 B = {} B\n",
                     r.kv.n_kv_heads, r.kv.head_dim, group_digits(offsets));
  out += fmt::format("    one block = {} layers x ({} tokens x {} B + {} B) = {}\n", n_layers,
                     r.kv.block_size, group_digits(per_slot), group_digits(offsets),
                     bytes(f.block_bytes));
  explain_growth(out, r, p, g);
}

// " + C fp16 copies x B" when the plan keeps an exact tail, else "".
std::string exact_tail_term(const MemoryPlan& p) {
  if (p.kv_exact_tail_copies <= 0) return {};
  return fmt::format(" + {} fp16 copies x {} B", group_digits(p.kv_exact_tail_copies),
                     group_digits(p.kv_exact_tail_bytes / p.kv_exact_tail_copies));
}

// "B0 blocks x S0 B + B1 blocks x S1 B" over the groups' pools.
std::string pools_sum(const KvFootprint& f) {
  std::string sum;
  for (const KvGroupFootprint& g : f.groups) {
    sum += fmt::format("{}{} x {} B", sum.empty() ? "" : " + ", group_digits(g.pool_blocks),
                       group_digits(g.block_bytes));
  }
  return sum;
}

// Several groups: the full ones get the busiest group's blocks, a sliding one at most its
// cap (kv_cache_config.h).
void explain_group_pools(std::string& out, const PlanRequest& r, const MemoryPlan& p) {
  out +=
      fmt::format("  pools: n = {} blocks, the busiest group's, for every full-attention group\n",
                  group_digits(p.kv.blocks_per_group_needed));
  for (std::size_t g = 0; g < r.kv.groups.size(); ++g) {
    const std::int64_t window = r.kv.groups[g].window;
    if (window == 0) continue;
    out += fmt::format(
        "    group {} (sliding): min(n, {} x ceil(({} + {} + {} - 2) / {})) = {} blocks: the "
        "window plus one chunk, for {}\n",
        g, p.kv_window_sequences, group_digits(window), group_digits(r.prefill_chunk),
        r.kv.block_size, r.kv.block_size, group_digits(p.kv.groups[g].pool_blocks),
        sequences(p.kv_window_sequences));
  }
}

void explain_kv(std::string& out, const PlanRequest& r, const MemoryPlan& p) {
  out += fmt::format("KV cache: {} x {} tokens, blocks of {} tokens\n", sequences(r.batch),
                     group_digits(r.context), r.kv.block_size);
  for (std::size_t g = 0; g < r.kv.groups.size(); ++g) explain_group(out, r, p, g);
  out += fmt::format("  all layers: {} B per token before rounding to blocks\n",
                     per_token_text(p.kv_bytes_per_token));
  const std::string tail = exact_tail_term(p);
  if (r.kv.groups.size() == 1) {
    out +=
        fmt::format("  needed: {} x {} blocks x {} B{} = {}\n", sequences(r.batch),
                    group_digits(p.kv.blocks_per_group_needed / r.batch),
                    group_digits(p.kv.groups[0].block_bytes), tail, bytes(p.kv.pool_bytes_needed));
  } else {
    explain_group_pools(out, r, p);
    out +=
        fmt::format("  needed: {}{} = {}\n", pools_sum(p.kv), tail, bytes(p.kv.pool_bytes_needed));
  }
  if (p.kv_full_cache_bytes > 0) {
    out += fmt::format(
        "  the windows save {} against keeping every layer's whole context ({}, llama.cpp's "
        "--swa-full)\n",
        human_bytes(p.kv_full_cache_bytes - p.kv.pool_bytes_needed),
        human_bytes(p.kv_full_cache_bytes));
  }
  if (p.kv_exact_tail_copies > 0) {
    out += "  exact tail: each sequence's newest blocks also kept in fp16 (kv/exact_tail.h)\n";
  }
}

void explain_workspace(std::string& out, const PlanRequest& r, const MemoryPlan& p) {
  const ModelSpec& s = r.spec;
  const Workspace& w = p.workspace;
  out += "Workspace\n";
  if (r.backend == PlanBackend::Cuda) {
    out += fmt::format(
        "  activations = the CUDA backend's step buffers at up to {} tokens per step (f32 "
        "activations, split partials, 8-bit codes, cuBLAS fp16 inputs, step tables) = {}\n",
        group_digits(w.step_tokens), bytes(w.activations));
  } else {
    out += fmt::format(
        "  activations = {} tokens per step x 4 B x (3 x {} + 2 x {} + 2 x {} + 2 x {} + {}) = "
        "{}\n",
        group_digits(w.step_tokens), s.dim, s.q_dim(), s.kv_dim(), s.ffn_dim, s.rope_dim,
        bytes(w.activations));
  }
  out += fmt::format("  logits      = {} x {} vocab x 4 B = {}\n", sequences(r.batch),
                     group_digits(s.vocab_size), bytes(w.logits));
  if (w.buffers > 0) {
    // the cuBLAS workspace is the device's (32 MiB from sm_90, 4 MiB before)
    out += fmt::format(
        "  buffers     = RoPE tables for {} positions, cuBLAS workspace ({} MiB, {} sm_90) and "
        "fp16 weight slab = {}\n",
        group_digits(plan_engine_context(r)), cublas_workspace_bytes(r.cuda.compute_major) >> 20,
        r.cuda.compute_major >= 9 ? "from" : "before", bytes(w.buffers));
  }
  out += fmt::format(
      "  {} backend = {}\n", plan_backend_name(r.backend),
      w.backend > 0 ? bytes(w.backend) + ": CUDA context and cuBLAS handle" : std::string("0 B"));
}

void explain_budget(std::string& out, const PlanRequest& r, const MemoryPlan& p) {
  out += "Budget\n";
  if (r.kv_budget_bytes > 0) {
    out += fmt::format("  KV budget given: {}\n", bytes(r.kv_budget_bytes));
  } else {
    out += fmt::format("  usable = {} B x {:.2f} - {} B used by others = {}\n",
                       group_digits(r.budget.total_bytes), r.budget.utilisation,
                       group_digits(r.budget.used_by_others), bytes(p.usable_bytes));
    out +=
        fmt::format("  KV budget = usable - weights - workspace = {}\n", bytes(p.kv_budget_bytes));
  }
  if (p.kv_full_cache_bytes > 0) {
    out += fmt::format(
        "  KV pool = the largest n whose pools fit {}{}: n = {}, sliding groups at most their "
        "cap, {}\n",
        bytes(p.kv_budget_bytes),
        p.kv_exact_tail_bytes > 0
            ? fmt::format(" less {} B of exact-tail copies", group_digits(p.kv_exact_tail_bytes))
            : std::string(),
        group_digits(p.kv_blocks_per_group), bytes(p.kv_pool_bytes));
  } else if (p.kv_exact_tail_bytes > 0) {
    out += fmt::format(
        "  KV pool = floor(({} - {} B of exact-tail copies) / {} B per block set) = {} blocks per "
        "group, with the copies {}\n",
        group_digits(p.kv_budget_bytes), group_digits(p.kv_exact_tail_bytes),
        group_digits(p.kv_block_set_bytes), group_digits(p.kv_blocks_per_group),
        bytes(p.kv_pool_bytes));
  } else {
    out += fmt::format("  KV pool = floor({} / {} B per block set) = {} blocks per group = {}\n",
                       group_digits(p.kv_budget_bytes), group_digits(p.kv_block_set_bytes),
                       group_digits(p.kv_blocks_per_group), bytes(p.kv_pool_bytes));
  }
}

void explain_verdict(std::string& out, const PlanRequest& r, const MemoryPlan& p) {
  if (r.kv_budget_bytes > 0) {
    out += fmt::format("Needed: KV {} of {}", bytes(p.total_needed), bytes(p.usable_bytes));
  } else {
    out += fmt::format("Needed: weights {} + workspace {} + KV {} = {} of {}",
                       human_bytes(p.weights.bytes), human_bytes(p.workspace.total()),
                       human_bytes(p.kv.pool_bytes_needed), human_bytes(p.total_needed),
                       human_bytes(p.usable_bytes));
  }
  if (!p.within_context) {
    out += fmt::format(": does not fit, the context {} exceeds the model's {}\n",
                       group_digits(r.context), group_digits(r.kv.max_context));
  } else if (p.fits) {
    out += fmt::format(": fits, {} to spare\n", human_bytes(p.margin_bytes));
  } else {
    out += fmt::format(": does not fit, {} short\n", human_bytes(-p.margin_bytes));
  }
}

void explain_roofline(std::string& out, const PlanRequest& r, const RooflineEstimate& e) {
  out += "Decode speed limit (roofline: every step reads the weights and the visible KV)\n";
  out += fmt::format("  bytes per step = weights {} + {} x KV at {} tokens {} = {}\n",
                     human_bytes(e.weight_bytes_read), sequences(r.batch), group_digits(r.context),
                     human_bytes(e.kv_bytes_read / r.batch), human_bytes(e.bytes_per_step));
  out += fmt::format("  tokens/s <= {} x {:g} GB/s / {} B = {:.1f} ({:.1f} per sequence)\n",
                     r.batch, e.bandwidth_gb_s, group_digits(e.bytes_per_step), e.tokens_per_s,
                     e.tokens_per_s_per_sequence);
}

}  // namespace

std::string explain_plan(const PlanRequest& request, const MemoryPlan& plan,
                         const std::optional<RooflineEstimate>& roofline) {
  std::string out;
  explain_weights(out, plan);
  explain_kv(out, request, plan);
  explain_workspace(out, request, plan);
  explain_budget(out, request, plan);
  explain_verdict(out, request, plan);
  if (roofline) explain_roofline(out, request, *roofline);
  return out;
}

std::string explain_needs(const PlanRequest& request, const MemoryPlan& plan) {
  std::string out;
  explain_weights(out, plan);
  explain_kv(out, request, plan);
  explain_workspace(out, request, plan);
  const std::int64_t total =
      plan.weights.bytes + plan.workspace.total() + plan.kv.pool_bytes_needed;
  out += fmt::format("Needs: weights {} + workspace {} + KV {} = {}\n",
                     group_digits(plan.weights.bytes), group_digits(plan.workspace.total()),
                     group_digits(plan.kv.pool_bytes_needed), bytes(total));
  return out;
}

}  // namespace kvscope
