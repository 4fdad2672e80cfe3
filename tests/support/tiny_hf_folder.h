// A tiny llama Hugging Face folder that loads and generates (2 layers, dim 32, 4 heads / 2 KV
// heads, vocab 260), for tests about what a folder's JSON files do rather than about its
// weights: model.safetensors of small pseudo-random F32 values (the same every time),
// config.json, the byte-level tokenizer.json of engine/text/tiny_tokenizer_json.h, and
// generation_config.json as the test gives it. A load takes milliseconds.
#pragma once

#include <cstdint>
#include <filesystem>

#include <nlohmann/json.hpp>

namespace kvscope::test {

inline constexpr std::int64_t kTinyHfVocab = 260;

// Writes the folder into `folder` (created if missing); a null `generation_config` writes no
// generation_config.json. Throws std::runtime_error when a file cannot be written.
void write_tiny_hf_folder(const std::filesystem::path& folder,
                          const nlohmann::json& generation_config = nullptr);

}  // namespace kvscope::test
