// A Hugging Face config.json turned into a ModelSpec. Separate from the weights so the
// planner can size a model from its config alone ("what fits" before downloading it).
#pragma once

#include <string>
#include <string_view>

#include "model/model_spec.h"

namespace kvscope {

// Parses config.json text. `source` names the file in messages. Supports model_type
// "llama", "mistral", "qwen2", "qwen3", "gemma2", "gemma3_text" and "gemma3" (whose text_config
// is read; architecture "gemma3" for both). The returned spec is validated; vocab_size is the
// config's (the loader checks it against the embedding tensor), name is left empty.
// Throws ModelError naming the field: "config.json: num_key_value_heads: expected an
// integer, found string".
ModelSpec parse_hf_config(std::string_view json_text, const std::string& source);

// Reads and parses the file at `path`.
ModelSpec read_hf_config(const std::string& path);

}  // namespace kvscope
