// `kvscope-cli plan`: will this model, at this context and batch, with this KV dtype, fit
// in this GPU, and how fast can it decode? Prints the memory breakdown with its formulas,
// the maxima (context, batch, KV dtype, smallest GPU) and the roofline bound, or all of it
// as one JSON object (--json). The numbers are engine/plan's, which are the allocator's.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/arg_parser.h"
#include "cli/command.h"
#include "cli/commands/plan_node.h"
#include "cli/commands/plan_split.h"
#include "cli/json_text.h"
#include "cli/presets_path.h"
#include "model/model.h"
#include "plan/plan_explainer.h"
#include "plan/presets.h"
#include "plan/solvers.h"
#include "plan/units.h"
#include "util/error.h"

namespace kvscope::cli {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

void declare_plan_options(ArgParser& p) {
  p.option({"--model"}, "model preset, e.g. llama-7b, mistral-7b-v0.1 (see --list)");
  p.option({"-m"}, "a real model: GGUF file or Hugging Face folder (exact weight bytes)");
  p.option({"--gpu"}, "GPU preset, e.g. rtx-4090, h100-sxm (see --list)");
  p.option({"--vram"}, "memory size instead of a GPU preset, e.g. 16GB, 12GiB");
  p.option({"--batch"}, "sequences decoded together (default 1)");
  p.option({"-c", "--ctx"}, "tokens per sequence (default: the model's context length)");
  p.option({"-ctk", "--cache-type-k"}, "K cache dtype: f16, int8, int4 (default f16)");
  p.option({"-ctv", "--cache-type-v"}, "V cache dtype: f16, int8, int4 (default f16)");
  p.option({"--weights"},
           "preset weight type: f16, q8_0, q6_k, q5_k_m, q4_k_m, q4_0 "
           "(default q4_k_m)");
  p.option({"--kv-budget"}, "give the KV pool this much directly, e.g. 8GiB");
  p.option({"--util"}, "fraction of the memory the engine may use (default 0.9)");
  p.option({"--used"}, "memory already used by other programs, e.g. 1.5GiB (default 0)");
  p.option({"--block-size"}, "KV block size in tokens (default 16)");
  p.option({"--chunk"}, "prompt tokens per step, chunked prefill (default 512)");
  p.option({"--backend"}, "cuda or cpu: whether to count the CUDA context (default cuda)");
  p.option({"--bandwidth"}, "memory bandwidth in GB/s for the roofline (default: the GPU's)");
  p.option({"--presets"}, "folder holding models.json and gpus.json");
  p.flag({"--list"}, "list the model and GPU presets");
  p.flag({"--json"}, "print one JSON object");
  declare_node_options(p);
  declare_split_options(p);
}

using ModelChoice = PlanModel;

ModelChoice choose_model(const ArgParser& p, const fs::path& dir) {
  if (p.has("--model") == p.has("-m")) {
    throw_error<UsageError>("give a model preset with --model NAME or a file with -m FILE");
  }
  ModelChoice c;
  if (auto path = p.get("-m")) {
    if (p.has("--weights")) {
      throw_error<UsageError>("--weights applies to presets; -m {} has its own tensor types",
                              *path);
    }
    const auto model = load_model(*path);
    c = {*path, model->spec(), model_weights(*model), "exact", 0, ""};
    return c;
  }
  const std::vector<ModelPreset> models = load_model_presets(dir / "models.json");
  const ModelPreset& preset = find_model_preset(models, p.required("--model"));
  // A node plan is for vLLM, which serves the Hugging Face weights as they are (bf16).
  const char* fallback = wants_node_plan(p) ? "f16" : "q4_k_m";
  const WeightType type = parse_weight_type(p.get_or("--weights", fallback));
  c = {preset.slug,
       preset.spec,
       preset_weights(preset.spec, preset.n_params, type),
       std::string(weight_type_info(type).name),
       preset.n_params,
       preset.hf_repo};
  return c;
}

PlanRequest build_request(const ArgParser& p, const ModelChoice& m, const GpuPreset* gpu) {
  const KvDtype k = parse_kv_dtype(p.get_or("-ctk", "f16"));
  const KvDtype v = parse_kv_dtype(p.get_or("-ctv", "f16"));
  PlanRequest r =
      make_plan_request(m.spec, m.weights, k, v, p.get_int("--block-size", 16, 1, 4096));
  r.batch = p.get_int("--batch", 1, 1, std::int64_t{1} << 20);
  r.context = p.get_int("-c", m.spec.context_length, 1, std::int64_t{1} << 30);
  r.prefill_chunk = p.get_int("--chunk", 512, 1, std::int64_t{1} << 30);
  const std::string backend = p.get_or("--backend", "cuda");
  if (backend != "cuda" && backend != "cpu") {
    throw_error<UsageError>("--backend: '{}' (expected cuda or cpu)", backend);
  }
  r.backend = backend == "cuda" ? PlanBackend::Cuda : PlanBackend::Cpu;
  r.budget.utilisation = p.get_double("--util", 0.9, 0.01, 1.0);
  if (auto used = p.get("--used")) r.budget.used_by_others = parse_byte_size(*used, "--used");
  if (gpu != nullptr && p.has("--vram")) throw_error<UsageError>("give --gpu or --vram, not both");
  if (gpu != nullptr) {
    r.budget.total_bytes = gpu->memory_bytes;
    r.cuda = gpu_workspace_options(*gpu);  // its cuBLAS workspace and SMs
  }
  if (auto vram = p.get("--vram")) r.budget.total_bytes = parse_byte_size(*vram, "--vram");
  if (auto kv = p.get("--kv-budget")) r.kv_budget_bytes = parse_byte_size(*kv, "--kv-budget");
  return r;
}

// No memory given: what the request needs. plan_memory wants a budget; any one serves, since
// weights, workspace and KV needed do not depend on it, and none of its verdict is shown.
int print_needs(const ArgParser& p, const ModelChoice& m, PlanRequest r) {
  r.budget.total_bytes = std::int64_t{1} << 50;
  const MemoryPlan plan = plan_memory(r);
  const std::int64_t total =
      plan.weights.bytes + plan.workspace.total() + plan.kv.pool_bytes_needed;
  if (p.has("--json")) {
    const json out = {{"model", m.label},
                      {"weight_type", m.weight_type},
                      {"batch", r.batch},
                      {"context", r.context},
                      {"weights_bytes", plan.weights.bytes},
                      {"kv_bytes_per_token", plan.kv_bytes_per_token},
                      {"kv_bytes", plan.kv.pool_bytes_needed},
                      {"workspace_bytes", plan.workspace.total()},
                      {"total_bytes", total},
                      {"formula", explain_needs(r, plan)}};
    fmt::print("{}\n", json_text(out));
  } else {
    fmt::print("Model {} (weights {}), no memory given: what it needs\n\n", m.label, m.weight_type);
    fmt::print("{}", explain_needs(r, plan));
  }
  return 0;
}

struct Answers {
  MemoryPlan plan;
  MaxContext max_context;
  std::int64_t max_batch = 0;
  std::optional<KvDtype> best_dtype;    // K and V alike
  std::optional<KvDtypes> best_dtypes;  // mixed allowed
  const GpuPreset* smallest_gpu = nullptr;
  std::optional<RooflineEstimate> roofline;
};

Answers solve(const ArgParser& p, const PlanRequest& r, const GpuPreset* gpu,
              const std::vector<GpuPreset>& gpus) {
  Answers a;
  a.plan = plan_memory(r);
  a.max_context = max_context(r);
  a.max_batch = max_batch(r);
  a.best_dtype = best_kv_dtype(r);
  a.best_dtypes = best_kv_dtypes(r);
  a.smallest_gpu = smallest_gpu(r, gpus);
  const double bandwidth =
      p.get_double("--bandwidth", gpu != nullptr ? gpu->bandwidth_gb_s : 0.0, 0.0, 1e6);
  if (bandwidth != 0.0) a.roofline = roofline_decode(r, bandwidth);
  return a;
}

void print_text(const ModelChoice& m, const GpuPreset* gpu, const PlanRequest& r,
                const Answers& a) {
  fmt::print("Model {} (weights {}), {}\n\n", m.label, m.weight_type,
             gpu != nullptr ? fmt::format("GPU {} ({}, {:g} GB/s)", gpu->name,
                                          human_bytes(gpu->memory_bytes), gpu->bandwidth_gb_s)
                            : fmt::format("memory {}", human_bytes(r.budget.total_bytes)));
  fmt::print("{}\n", explain_plan(r, a.plan, a.roofline));
  fmt::print("Maxima\n");
  fmt::print(
      "  longest context for {} sequences: {} tokens{}\n", r.batch,
      group_digits(a.max_context.tokens),
      a.max_context.limited_by_max_context ? " (the model's limit; memory allows more)" : "");
  fmt::print("  most sequences of {} tokens: {}\n", group_digits(r.context), a.max_batch);
  fmt::print("  most precise KV dtype that fits: {}\n",
             a.best_dtype ? std::string(kv_dtype_name(*a.best_dtype)) : "none");
  if (a.best_dtypes && a.best_dtypes->k != a.best_dtypes->v) {
    fmt::print("  or, mixed: K {}, V {} (keys lose more than values in 4 bits)\n",
               kv_dtype_name(a.best_dtypes->k), kv_dtype_name(a.best_dtypes->v));
  }
  fmt::print("  smallest GPU that fits (at utilisation {:.2f}): {}\n", r.budget.utilisation,
             a.smallest_gpu != nullptr ? a.smallest_gpu->name : "none of the presets");
  fmt::print("{}\n", a.plan.fits ? "FITS" : "DOES NOT FIT");
}

json to_json(const ModelChoice& m, const GpuPreset* gpu, const PlanRequest& r, const Answers& a) {
  const MemoryPlan& pl = a.plan;
  json out = {
      {"model", m.label},
      {"weight_type", m.weight_type},
      {"gpu", gpu != nullptr ? json(gpu->slug) : json(nullptr)},
      {"batch", r.batch},
      {"context", r.context},
      {"k_dtype", kv_dtype_name(r.kv.groups[0].k_dtype)},
      {"v_dtype", kv_dtype_name(r.kv.groups[0].v_dtype)},
      {"block_size", r.kv.block_size},
      {"weights_bytes", pl.weights.bytes},
      {"kv_bytes_per_token", pl.kv_bytes_per_token},
      {"kv_bytes", pl.kv.pool_bytes_needed},
      {"kv_blocks_per_group_needed", pl.kv.blocks_per_group_needed},
      {"workspace_bytes", pl.workspace.total()},
      {"workspace",
       {{"activations", pl.workspace.activations},
        {"logits", pl.workspace.logits},
        {"buffers", pl.workspace.buffers},
        {"backend", pl.workspace.backend}}},
      {"usable_bytes", pl.usable_bytes},
      {"kv_budget_bytes", pl.kv_budget_bytes},
      {"kv_pool_blocks_per_group", pl.kv_blocks_per_group},
      {"kv_group_pool_blocks", pl.kv_group_blocks},
      {"kv_full_cache_bytes", pl.kv_full_cache_bytes},
      {"total_bytes", pl.total_needed},
      {"margin_bytes", pl.margin_bytes},
      {"within_context", pl.within_context},
      {"fits", pl.fits},
      {"max_context", a.max_context.tokens},
      {"max_context_limited_by_model", a.max_context.limited_by_max_context},
      {"max_batch", a.max_batch},
      {"best_kv_dtype", a.best_dtype ? json(kv_dtype_name(*a.best_dtype)) : json(nullptr)},
      {"best_kv_dtypes", a.best_dtypes ? json{{"k", kv_dtype_name(a.best_dtypes->k)},
                                              {"v", kv_dtype_name(a.best_dtypes->v)}}
                                       : json(nullptr)},
      {"smallest_gpu", a.smallest_gpu ? json(a.smallest_gpu->slug) : json(nullptr)},
      {"formula", explain_plan(r, pl, a.roofline)},
  };
  if (a.roofline) {
    out["roofline"] = {{"bandwidth_gb_s", a.roofline->bandwidth_gb_s},
                       {"bytes_per_step", a.roofline->bytes_per_step},
                       {"tokens_per_s", a.roofline->tokens_per_s},
                       {"tokens_per_s_per_sequence", a.roofline->tokens_per_s_per_sequence}};
  } else {
    out["roofline"] = nullptr;
  }
  return out;
}

void print_list(const fs::path& dir) {
  fmt::print("models ({}):\n", (dir / "models.json").string());
  for (const ModelPreset& m : load_model_presets(dir / "models.json")) {
    fmt::print("  {:<18} {} ({} parameters)\n", m.slug, m.name, group_digits(m.n_params));
  }
  fmt::print("GPUs ({}):\n", (dir / "gpus.json").string());
  for (const GpuPreset& g : load_gpu_presets(dir / "gpus.json")) {
    fmt::print("  {:<18} {} ({}, {:g} GB/s)\n", g.slug, g.name, human_bytes(g.memory_bytes),
               g.bandwidth_gb_s);
  }
}

}  // namespace

int cmd_plan(const Args& args) {
  ArgParser p("plan",
              "(--model NAME | -m FILE) [--gpu NAME | --vram SIZE | --kv-budget SIZE] "
              "[--tp N] [--pp N] [--emit vllm] [options]");
  declare_plan_options(p);
  if (!p.parse(args)) return 0;
  const fs::path dir = presets_dir(p);
  if (p.has("--list")) {
    print_list(dir);
    return 0;
  }
  const std::vector<GpuPreset> gpus = load_gpu_presets(dir / "gpus.json");
  const GpuPreset* gpu = p.has("--gpu") ? &find_gpu_preset(gpus, p.required("--gpu")) : nullptr;
  const ModelChoice model = choose_model(p, dir);
  const PlanRequest request = build_request(p, model, gpu);
  if (wants_node_plan(p)) return run_node_plan(p, model, request, gpu);
  if (request.budget.total_bytes == 0 && request.kv_budget_bytes == 0) {
    return print_needs(p, model, request);
  }
  const Answers answers = solve(p, request, gpu, gpus);
  const double bandwidth = p.get_double("--bandwidth", gpu ? gpu->bandwidth_gb_s : 0.0, 0.0, 1e6);
  if (p.has("--json")) {
    json out = to_json(model, gpu, request, answers);
    out["layer_split"] = layer_split_json(p, model, request, bandwidth);
    fmt::print("{}\n", json_text(out));
  } else {
    print_text(model, gpu, request, answers);
    print_layer_split(p, model, request, bandwidth);
  }
  return 0;
}

}  // namespace kvscope::cli
