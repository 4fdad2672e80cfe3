// `kvscope-cli models`: the models other tools (Hugging Face, Ollama, LM Studio, GPT4All,
// llama.cpp, Jan) and KVScope keep on this computer, read from their headers, with the
// planner's answer for a GPU: fits at N tokens with KV dtype X (and the longest context
// it could reach), or short by Y bytes. A table, or one JSON object (--json).
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/arg_parser.h"
#include "cli/command.h"
#include "cli/json_text.h"
#include "cli/presets_path.h"
#include "model/discovery/model_scan.h"
#include "plan/local_model_fit.h"
#include "plan/presets.h"
#include "plan/units.h"
#include "util/error.h"

namespace kvscope::cli {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

void declare_models_options(ArgParser& p) {
  p.option({"--home"}, "the home folder to look in (default $HOME)");
  p.option({"--add"}, "also look in this folder (repeatable; folders after it are added too)");
  p.option({"--gpu"}, "answer for this GPU preset, e.g. rtx-4090 (see `plan --list`)");
  p.option({"--vram"}, "answer for this much memory instead of a GPU preset, e.g. 12GiB");
  p.option({"-c", "--ctx"}, "tokens of context to plan for (default: each model's own limit)");
  p.option({"--kv"}, "K and V cache dtype: f16, int8, int4 (default: the most precise that fits)");
  p.option({"--presets"}, "folder holding gpus.json");
  p.flag({"--json"}, "print one JSON object");
}

// Every value given to --add (ArgParser keeps only the last), then the positional folders.
std::vector<fs::path> added_folders(const Args& args, const ArgParser& p) {
  std::vector<fs::path> folders;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--add" && i + 1 < args.size()) folders.emplace_back(args[++i]);
    if (args[i].starts_with("--add=")) folders.emplace_back(args[i].substr(6));
  }
  for (const std::string& folder : p.positional()) folders.emplace_back(folder);
  return folders;
}

fs::path home_folder(const ArgParser& p) {
  if (auto home = p.get("--home")) return *home;
  if (auto home = process_env()("HOME")) return *home;
  throw_error<UsageError>("HOME is not set; give the home folder with --home DIR");
}

struct Question {
  std::optional<LocalFitQuestion> fit;  // nullopt: no memory given, no planner answer
  std::string memory_label;             // "GeForce RTX 4090 (24.0 GiB)"
};

Question read_question(const ArgParser& p) {
  if (p.has("--gpu") && p.has("--vram")) throw_error<UsageError>("give --gpu or --vram, not both");
  Question q;
  if (!p.has("--gpu") && !p.has("--vram")) return q;
  LocalFitQuestion fit;
  if (auto gpu_name = p.get("--gpu")) {
    const std::vector<GpuPreset> gpus = load_gpu_presets(presets_dir(p) / "gpus.json");
    const GpuPreset& gpu = find_gpu_preset(gpus, *gpu_name);
    fit.memory_bytes = gpu.memory_bytes;
    fit.cuda = gpu_workspace_options(gpu);
    q.memory_label = fmt::format("{} ({})", gpu.name, human_bytes(gpu.memory_bytes));
  } else {
    fit.memory_bytes = parse_byte_size(p.required("--vram"), "--vram");
    q.memory_label = human_bytes(fit.memory_bytes);
  }
  fit.context = p.get_int("-c", 0, 1, std::int64_t{1} << 30);
  if (auto kv = p.get("--kv")) fit.kv_dtype = parse_kv_dtype(*kv);
  q.fit = fit;
  return q;
}

// "135M", "6.74B": parameters as model cards write them.
std::string short_count(std::int64_t n) {
  if (n >= 1'000'000'000) return fmt::format("{:.2f}B", static_cast<double>(n) / 1e9);
  if (n >= 1'000'000) return fmt::format("{:.0f}M", static_cast<double>(n) / 1e6);
  if (n >= 1'000) return fmt::format("{:.0f}K", static_cast<double>(n) / 1e3);
  return std::to_string(n);
}

void print_table(const std::vector<LocalModel>& models, const Question& q) {
  if (q.fit) fmt::print("Planner answers for {}\n\n", q.memory_label);
  fmt::print("{:<32} {:<12} {:<8} {:>8} {:<18} {:>10} {:>8}  {}\n", "NAME", "SOURCE", "ARCH",
             "PARAMS", "WEIGHTS", "SIZE", "CONTEXT", q.fit ? "PLAN" : "");
  for (const LocalModel& m : models) {
    if (!m.ok()) {
      fmt::print("{:<32} {:<12} error: {}\n", m.name, m.source, m.error);
    } else {
      fmt::print("{:<32} {:<12} {:<8} {:>8} {:<18} {:>10} {:>8}  {}\n", m.name, m.source,
                 m.architecture, short_count(m.n_params), m.weight_type,
                 human_bytes(static_cast<std::int64_t>(m.file_bytes)),
                 group_digits(m.context_length),
                 q.fit ? describe_local_fit(answer_local_fit(m, *q.fit)) : "");
    }
    fmt::print("    {}{}\n", m.path.string(),
               m.n_parts > 1 ? fmt::format(" (+{} more parts)", m.n_parts - 1) : "");
  }
  if (models.empty()) fmt::print("(no models found)\n");
  if (!q.fit) fmt::print("\nGive --gpu NAME or --vram SIZE for the planner's answer.\n");
}

json fit_json(const LocalFitAnswer& a) {
  if (!a.ok()) return {{"error", a.error}};
  return {{"fits", a.fits},
          {"context", a.context},
          {"kv_dtype", kv_dtype_name(a.kv_dtype)},
          {"max_context", a.max_context.tokens},
          {"max_context_limited_by_model", a.max_context.limited_by_max_context},
          {"short_by_bytes", a.short_by_bytes}};
}

json model_json(const LocalModel& m, const Question& q) {
  json out = {{"name", m.name},
              {"source", m.source},
              {"path", m.path.string()},
              {"format", m.format == LocalModelFormat::Gguf ? "gguf" : "hf"},
              {"parts", m.n_parts}};
  if (!m.ok()) {
    out["error"] = m.error;
    return out;
  }
  out.update({{"architecture", m.architecture},
              {"n_params", m.n_params},
              {"weight_type", m.weight_type},
              {"file_bytes", m.file_bytes},
              {"weight_bytes", m.weight_bytes},
              {"context_length", m.context_length}});
  out["plan"] = q.fit ? fit_json(answer_local_fit(m, *q.fit)) : json(nullptr);
  return out;
}

}  // namespace

int cmd_models(const Args& args) {
  ArgParser p("models",
              "[--home DIR] [--add DIR ...] [--gpu NAME | --vram SIZE] [--ctx N] [--json]");
  declare_models_options(p);
  if (!p.parse(args)) return 0;
  const Question q = read_question(p);
  const std::vector<LocalModel> models =
      scan_local_models(model_places(home_folder(p), process_env(), added_folders(args, p)));
  if (p.has("--json")) {
    json list = json::array();
    for (const LocalModel& m : models) list.push_back(model_json(m, q));
    fmt::print("{}\n", json_text(json{{"memory", q.memory_label}, {"models", list}}));
  } else {
    print_table(models, q);
  }
  return 0;
}

}  // namespace kvscope::cli
