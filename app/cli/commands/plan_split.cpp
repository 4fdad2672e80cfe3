#include "cli/commands/plan_split.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

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
  if (m.weight_type == "exact") {
    set_model_layer_bytes(s, *load_model(m.label));
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

namespace {

struct SplitAnswer {
  LayerSplitRequest request;
  LayerSplitPlan plan;
};

SplitAnswer solve_split(const ArgParser& p, const PlanModel& m, const PlanRequest& r,
                        double gpu_bandwidth_gb_s) {
  SplitAnswer a{split_request(m, r), {}};
  if (const auto v = p.get("--gpu-layers"); v && *v != "auto") {
    a.request.gpu_layers = p.get_int("--gpu-layers", 0, 0, m.spec.n_layers);
  }
  a.request.gpu_bandwidth_gb_s = gpu_bandwidth_gb_s;
  a.request.cpu_bandwidth_gb_s = p.get_double("--cpu-bandwidth", 0.0, 0.0, 1e6);
  a.plan = plan_layer_split(a.request);
  return a;
}

nlohmann::json side_json(const SplitSide& side) {
  return {{"weights", side.weights},
          {"kv", side.kv},
          {"workspace", side.workspace},
          {"total", side.total()},
          {"kv_pool", side.kv_pool}};
}

}  // namespace

void print_layer_split(const ArgParser& p, const PlanModel& m, const PlanRequest& r,
                       double gpu_bandwidth_gb_s) {
  if (r.budget.total_bytes == 0) return;
  const auto [s, plan] = solve_split(p, m, r, gpu_bandwidth_gb_s);
  const std::int64_t n = m.spec.n_layers;
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

nlohmann::json layer_split_json(const ArgParser& p, const PlanModel& m, const PlanRequest& r,
                                double gpu_bandwidth_gb_s) {
  if (r.budget.total_bytes == 0) return nullptr;
  const auto [s, plan] = solve_split(p, m, r, gpu_bandwidth_gb_s);
  nlohmann::json out = {{"n_layers", plan.n_layers},
                        {"gpu_layers", plan.gpu_layers},
                        {"gpu", side_json(plan.gpu)},
                        {"cpu", side_json(plan.cpu)},
                        {"gpu_usable", plan.gpu_usable},
                        {"fits", plan.fits},
                        {"kv_blocks_per_group", plan.kv_blocks_per_group}};
  if (plan.tokens_per_s > 0.0) {
    out["roofline"] = {{"gpu_bandwidth_gb_s", s.gpu_bandwidth_gb_s},
                       {"cpu_bandwidth_gb_s", s.cpu_bandwidth_gb_s},
                       {"gpu_bytes_per_step", plan.gpu_bytes_per_step},
                       {"cpu_bytes_per_step", plan.cpu_bytes_per_step},
                       {"seconds_per_step", plan.seconds_per_step},
                       {"tokens_per_s", plan.tokens_per_s}};
  } else {
    out["roofline"] = nullptr;
  }
  return out;
}

}  // namespace kvscope::cli
