#include "cli/commands/plan_split.h"

#include <fmt/format.h>

#include "model/model.h"
#include "plan/layer_split_plan.h"
#include "plan/units.h"

namespace kvscope::cli {

namespace {

// Per-layer bytes: exact for a file; for a preset, the token table (and an untied output
// head) at the weight type's bits per weight and the rest shared evenly by the layers.
LayerSplitRequest split_request(const PlanModel& m, const PlanRequest& r) {
  LayerSplitRequest s;
  s.plan = r;
  const std::int64_t n = m.spec.n_layers;
  if (m.weight_type == "exact") {
    const auto model = load_model(m.label);
    for (std::int64_t l = 0; l < n; ++l) {
      s.layer_bytes.push_back(
          static_cast<std::int64_t>(model->weight_bytes(l, l + 1, false, false)));
    }
    s.embedding_bytes = static_cast<std::int64_t>(model->weight_bytes(0, 0, true, false));
    s.output_bytes =
        static_cast<std::int64_t>(model->weight_bytes(0, 0, true, true)) - s.embedding_bytes;
    return s;
  }
  set_preset_layer_bytes(s, parse_weight_type(m.weight_type));
  return s;
}

void print_side(const char* name, const SplitSide& side) {
  fmt::print("  {}: weights {} + KV {} + workspace {} = {}\n", name, human_bytes(side.weights),
             human_bytes(side.kv), human_bytes(side.workspace), human_bytes(side.total()));
}

}  // namespace

void declare_split_options(ArgParser& p) {
  p.option({"-ngl", "--gpu-layers"},
           "layer split: plan this many layers on the GPU (default: the most that fit)");
  p.option({"--cpu-bandwidth"},
           "CPU memory bandwidth in GB/s for the split's roofline (`kvscope-cli bench` measures "
           "it; default: no roofline)");
}

void print_layer_split(const ArgParser& p, const PlanModel& m, const PlanRequest& r,
                       double gpu_bandwidth_gb_s) {
  if (r.budget.total_bytes == 0) return;
  LayerSplitRequest s = split_request(m, r);
  const std::int64_t n = m.spec.n_layers;
  if (const auto v = p.get("--gpu-layers"); v && *v != "auto") {
    s.gpu_layers = p.get_int("--gpu-layers", 0, 0, n);
  }
  s.gpu_bandwidth_gb_s = gpu_bandwidth_gb_s;
  s.cpu_bandwidth_gb_s = p.get_double("--cpu-bandwidth", 0.0, 0.0, 1e6);
  const LayerSplitPlan plan = plan_layer_split(s);
  fmt::print("\nLayer split (--gpu-layers), batch {} x {} tokens\n", r.batch,
             group_digits(r.context));
  fmt::print("  {} of {} layers on the GPU{}\n", plan.gpu_layers, n,
             plan.gpu_layers == n   ? " (the whole model)"
             : plan.gpu_layers == 0 ? " (not one fits: the CPU runs all)"
                                    : "; the token table, the rest and the output head on the CPU");
  print_side("GPU (VRAM)", plan.gpu);
  fmt::print("    usable {}{}\n", human_bytes(plan.gpu_usable), plan.fits ? "" : ": DOES NOT FIT");
  print_side("CPU (RAM) ", plan.cpu);
  if (plan.tokens_per_s > 0.0) {
    fmt::print(
        "  decode roofline: {} from VRAM at {:g} GB/s + {} from RAM at {:g} GB/s per step = "
        "{:.1f} ms, at most {:.1f} tokens/s\n",
        human_bytes(plan.gpu_bytes_per_step), s.gpu_bandwidth_gb_s,
        human_bytes(plan.cpu_bytes_per_step), s.cpu_bandwidth_gb_s, plan.seconds_per_step * 1e3,
        plan.tokens_per_s);
  } else if (plan.gpu_layers < n) {
    fmt::print("  decode roofline: give --cpu-bandwidth (and --bandwidth without a GPU preset)\n");
  }
}

}  // namespace kvscope::cli
