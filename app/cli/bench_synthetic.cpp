#include "cli/bench_synthetic.h"

#include <chrono>
#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>

#include "cli/presets_path.h"
#include "model/synthetic_model.h"
#include "plan/presets.h"
#include "quant/tensor_type.h"
#include "util/error.h"

namespace kvscope::cli {

namespace fs = std::filesystem;

void declare_synthetic_options(ArgParser& p) {
  p.option({"--synthetic"}, "benchmark a random-weight model of a preset's shape, e.g. llama-3-8b");
  p.option({"--weights"},
           "its weight type: f16, q8_0 or q4_0 (fast to write), or another (default q4_0)");
  p.option({"--synthetic-dir"},
           "where synthetic models are kept (default ~/.cache/kvscope/synthetic)");
  p.option({"--presets"}, "folder holding models.json and gpus.json");
}

namespace {

fs::path synthetic_dir(const ArgParser& p) {
  if (auto dir = p.get("--synthetic-dir")) return *dir;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg != '\0') {
    return fs::path(xdg) / "kvscope" / "synthetic";
  }
  const char* home = std::getenv("HOME");
  return fs::path(home != nullptr ? home : ".") / ".cache" / "kvscope" / "synthetic";
}

TensorType synthetic_weight_type(const std::string& name) {
  const auto type = tensor_type_from_name(name);
  if (!type || !tensor_type_info(*type).supported) {
    throw_error<UsageError>(
        "--weights {}: not a weight type this engine runs (try f16, q8_0, q4_0, q4_K)", name);
  }
  return *type;
}

}  // namespace

std::string bench_model_path(const ArgParser& p) {
  if (p.has("-m") == p.has("--synthetic")) {
    throw_error<UsageError>(
        "give a model file with -m FILE or a preset shape with --synthetic NAME");
  }
  if (auto path = p.get("-m")) return *path;
  const std::vector<ModelPreset> presets = load_model_presets(presets_dir(p) / "models.json");
  const ModelPreset& preset = find_model_preset(presets, p.required("--synthetic"));
  const TensorType type = synthetic_weight_type(p.get_or("--weights", "q4_0"));
  const fs::path dir = synthetic_dir(p);
  const fs::path file = dir / fmt::format("{}-{}.gguf", preset.slug, tensor_type_name(type));
  if (fs::exists(file)) return file.string();

  fs::create_directories(dir);
  ModelSpec spec = preset.spec;
  spec.name = preset.name + " (random weights)";
  fmt::print(stderr, "writing {} ({} weights, random) ...\n", file.string(),
             tensor_type_name(type));
  const auto start = std::chrono::steady_clock::now();
  const fs::path partial = file.string() + ".partial";
  write_synthetic_gguf(partial.string(), spec, type, 42, nullptr, SyntheticFill::Blocks);
  fs::rename(partial, file);  // a run cut short never leaves a file that looks complete
  fmt::print(stderr, "wrote {:.2f} GB in {:.1f} s\n",
             static_cast<double>(fs::file_size(file)) / 1e9,
             std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  return file.string();
}

}  // namespace kvscope::cli
