// One model found on this computer, described from its headers alone: a GGUF file's
// metadata and tensor infos, or a Hugging Face folder's config.json and safetensors
// headers. The weights are never mapped or read (GgufFile::read_header and
// SafetensorsFile::read_header read the files' first bytes), so describing a 70 GB model
// costs the few MB of its header. A file that
// cannot be read comes back with `error` set, never as an exception: one broken download
// must not hide the others.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "model/model_spec.h"

namespace kvscope {

enum class LocalModelFormat { Gguf, HfFolder };

struct LocalModel {
  std::string name;    // as the tool that keeps it names it: "llama3.2:1b", "org/repo", "x.gguf"
  std::string source;  // the tool: "Hugging Face", "Ollama", "LM Studio", ... (model_places.h)
  std::filesystem::path path;  // the GGUF file (part 1 of a split one) or the HF folder
  LocalModelFormat format = LocalModelFormat::Gguf;
  std::int64_t n_parts = 1;      // files of a split GGUF (name-00001-of-00003.gguf)
  std::uint64_t file_bytes = 0;  // every part, or every .safetensors file of the folder

  // Non-empty: what is wrong with the files; the fields below are then unset.
  std::string error;

  std::string architecture;   // "llama", "qwen2", ...
  std::int64_t n_params = 0;  // elements of every stored tensor
  std::string weight_type;    // the layers' matrices: "Q4_1", "BF16", "mixed (Q4_K, Q6_K)"
  std::int64_t context_length = 0;
  ModelSpec spec;  // the shape the planner sizes the KV cache from
  // As plan/weight_footprint.h's model_weights() counts a loaded model: the stored bytes of
  // every tensor, and the bytes one decoded token reads (all but an untied token table,
  // of which one row).
  std::int64_t weight_bytes = 0;
  std::int64_t weight_read_per_token = 0;

  bool ok() const { return error.empty(); }
};

// A GGUF model in `parts` (one file, or every part of a split file in order). Part 1
// holds the metadata; every part's tensors are counted. A missing part is an error.
LocalModel describe_gguf(const std::vector<std::filesystem::path>& parts);

// A Hugging Face folder: config.json and its *.safetensors files.
LocalModel describe_hf_folder(const std::filesystem::path& folder);

}  // namespace kvscope
