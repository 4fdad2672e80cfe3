// Model and GPU catalogues for the planner, read from data files (resources/presets/*.json,
// installed as share/kvscope/presets/). Data, not code: adding a GPU is an edit to gpus.json.
//
//   models.json  {"models": [{"slug", "name", "architecture", "n_params", "n_layers", "dim",
//                 "n_heads", "n_kv_heads", "head_dim", "ffn_dim", "vocab_size",
//                 "context_length", "sliding_window", ["sliding_window_pattern"],
//                 "tied_embeddings", ["qkv_bias"], ["hf_repo"]}, ...]}
//                The architecture sets the rest (apply_architecture_defaults, model_spec.h);
//                sliding_window_pattern P: the last layer of every P attends to everything.
//   gpus.json    {"gpus": [{"slug", "name", "memory_bytes", "bandwidth_gb_s",
//                 ["compute_capability"] ("8.9"), ["sm_count"], ["aliases"]}, ...]}
//
// Other keys ("source", "notes", "about", ...) are allowed and ignored.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "model/model_spec.h"
#include "plan/cuda_workspace.h"

namespace kvscope {

struct ModelPreset {
  std::string slug;  // lower-case lookup name: "llama-2-7b", "mistral-7b-v0.1"
  std::string name;  // as the authors spell it: "Llama-2-7B"
  std::int64_t n_params = 0;
  std::string hf_repo;  // Hugging Face repo id ("meta-llama/Llama-2-7b-hf"); may be empty
  ModelSpec spec;       // shape only: rope and norm fields keep their defaults
};

struct GpuPreset {
  std::string slug;  // "rtx-4090", "h100-sxm"
  std::string name;  // "GeForce RTX 4090"
  std::int64_t memory_bytes = 0;
  double bandwidth_gb_s = 0.0;       // peak memory bandwidth, 10^9 bytes per second
  std::vector<std::string> aliases;  // other names find_gpu_preset accepts ("h100-80gb")
  // The chip's compute capability ("8.9": major 8) and SMs, which size the CUDA backend's
  // workspace on it; 0 where the catalogue does not give them (the planner then assumes
  // the largest workspace, CudaWorkspaceOptions' defaults).
  int compute_major = 0;
  int compute_minor = 0;
  int sm_count = 0;
};

// The CUDA workspace options of the default backend on `gpu` (cuda_workspace.h): its compute
// capability and SMs where the catalogue gives them, the defaults otherwise.
CudaWorkspaceOptions gpu_workspace_options(const GpuPreset& gpu);

// Parse and validate a catalogue. A missing file, bad JSON, a missing or mistyped field, a
// value out of range, an inconsistent shape (ModelSpec validation) or a duplicate slug
// throws ModelError naming the file, the entry and the field.
std::vector<ModelPreset> load_model_presets(const std::filesystem::path& file);
std::vector<GpuPreset> load_gpu_presets(const std::filesystem::path& file);

// Lookup by slug or a GPU's alias (exact, case-insensitive). Unknown: UsageError listing the known
// slugs.
const ModelPreset& find_model_preset(const std::vector<ModelPreset>& presets,
                                     std::string_view slug);
const GpuPreset& find_gpu_preset(const std::vector<GpuPreset>& presets, std::string_view slug);

}  // namespace kvscope
