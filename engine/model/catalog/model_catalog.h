// The download catalog (resources/catalog/models.json, installed as
// share/kvscope/catalog/models.json): popular GGUF chat models, each with the shape the
// planner answers from before anything is downloaded, and its files per quantization.
//
//   {"models": [{"name", "display_name", "architecture", "license", "n_params", "n_layers",
//                "dim", "n_heads", "n_kv_heads", "head_dim", "ffn_dim", "vocab_size",
//                "context_length", "sliding_window", ["sliding_window_pattern"],
//                "tied_embeddings", ["qkv_bias"], "repo", "files": [{"quant", "file", "bytes",
//                ["exact_bytes"], ["revision"],
//                                    ["sha256"], ["repo"]}, ...]}, ...]}
//
// Other keys ("about", "shape_source", "file_source", "notes") are allowed and ignored.
// Data, not code: adding a model is an edit to models.json. A file is fetched from
// https://huggingface.co/REPO/resolve/REVISION/FILE (REVISION "main" when absent).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "model/model_spec.h"

namespace kvscope {

struct CatalogFile {
  std::string quant;     // as the file name spells it: "Q4_K_M"
  std::string file;      // "Qwen2.5-0.5B-Instruct-Q4_K_M.gguf": a plain file name
  std::string repo;      // "bartowski/Qwen2.5-0.5B-Instruct-GGUF"
  std::string revision;  // a commit or "main"
  std::int64_t bytes = 0;
  bool exact_bytes = false;  // else `bytes` is the file page's rounded size
  std::string sha256;        // 64 lower-case hex digits; empty when unknown

  // ENDPOINT/REPO/resolve/REVISION/FILE. The endpoint is the Hugging Face hub, or a mirror
  // ($HF_ENDPOINT, as huggingface_hub reads it; the tests' loopback server).
  std::string url(std::string_view endpoint = kHuggingFaceEndpoint) const;
  static constexpr std::string_view kHuggingFaceEndpoint = "https://huggingface.co";
};

struct CatalogModel {
  std::string name;          // what `kvscope-cli pull` takes: "qwen2.5-0.5b-instruct"
  std::string display_name;  // "Qwen2.5 0.5B Instruct"
  std::string license;
  std::int64_t n_params = 0;
  ModelSpec spec;                  // shape only; rope and norm fields keep their defaults
  bool supported = false;          // the engine runs spec.architecture
  std::vector<CatalogFile> files;  // the first is the default
};

// Parse and validate. Bad JSON, a missing or mistyped field, a value out of range, an
// inconsistent shape (ModelSpec validation), a file name with a path in it, a sha256 that
// is not 64 hex digits, or a duplicate name / quantization throws ModelError naming the
// file (`origin`), the entry and the field.
std::vector<CatalogModel> parse_model_catalog(std::string_view json_text,
                                              const std::string& origin);
std::vector<CatalogModel> load_model_catalog(const std::filesystem::path& file);

struct CatalogChoice {
  const CatalogModel* model = nullptr;
  const CatalogFile* file = nullptr;
};

// "NAME" (the model's first file) or "NAME:QUANT" (case-insensitive). UsageError listing
// the names, or the model's quantizations, when there is no such entry.
CatalogChoice find_catalog_file(const std::vector<CatalogModel>& catalog, std::string_view spec);

// The download size as Hugging Face shows file sizes (decimal units, 3 significant
// digits): "~398 MB", "~2.02 GB" for a file page's rounded size, "1.19 MB" for an exact one.
std::string catalog_size_text(const CatalogFile& file);

}  // namespace kvscope
