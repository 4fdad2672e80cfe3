#include "support/tiny_hf_folder.h"

#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/text/tiny_tokenizer_json.h"
#include "support/safetensors_writer.h"

namespace kvscope::test {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr std::int64_t kDim = 32;
constexpr std::int64_t kKvDim = 16;  // 2 KV heads x head_dim 8
constexpr std::int64_t kFfn = 48;
constexpr int kLayers = 2;

// F32 values in [-0.125, 0.125) from a fixed LCG (the tensor's index seeds it), or all 1 for
// the norms: logits then differ enough between tokens for greedy to be well defined.
SafetensorsEntry tensor(const std::string& name, std::vector<std::int64_t> shape, bool ones) {
  std::int64_t n = 1;
  for (auto d : shape) n *= d;
  const auto seed = static_cast<std::uint32_t>(std::hash<std::string>{}(name));
  return {name, SafetensorsDtype::F32, std::move(shape), [n, seed, ones](std::ostream& out) {
            std::uint32_t x = seed | 1u;
            for (std::int64_t i = 0; i < n; ++i) {
              x = x * 1664525u + 1013904223u;
              const float v = ones ? 1.0f : (static_cast<float>(x >> 8) / 16777216.0f - 0.5f) / 4;
              char bytes[4];
              std::memcpy(bytes, &v, 4);
              out.write(bytes, 4);
            }
          }};
}

std::vector<SafetensorsEntry> weights() {
  std::vector<SafetensorsEntry> t;
  t.push_back(tensor("model.embed_tokens.weight", {kTinyHfVocab, kDim}, false));
  for (int i = 0; i < kLayers; ++i) {
    const auto p = "model.layers." + std::to_string(i) + ".";
    t.push_back(tensor(p + "input_layernorm.weight", {kDim}, true));
    t.push_back(tensor(p + "self_attn.q_proj.weight", {kDim, kDim}, false));
    t.push_back(tensor(p + "self_attn.k_proj.weight", {kKvDim, kDim}, false));
    t.push_back(tensor(p + "self_attn.v_proj.weight", {kKvDim, kDim}, false));
    t.push_back(tensor(p + "self_attn.o_proj.weight", {kDim, kDim}, false));
    t.push_back(tensor(p + "post_attention_layernorm.weight", {kDim}, true));
    t.push_back(tensor(p + "mlp.gate_proj.weight", {kFfn, kDim}, false));
    t.push_back(tensor(p + "mlp.up_proj.weight", {kFfn, kDim}, false));
    t.push_back(tensor(p + "mlp.down_proj.weight", {kDim, kFfn}, false));
  }
  t.push_back(tensor("model.norm.weight", {kDim}, true));
  return t;  // no lm_head.weight: tied embeddings
}

void write_file(const fs::path& path, const json& j) {
  std::ofstream out(path);
  out << j.dump(2);
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

}  // namespace

void write_tiny_hf_folder(const fs::path& folder, const json& generation_config) {
  fs::create_directories(folder);
  write_file(folder / "config.json", {{"model_type", "llama"},
                                      {"hidden_size", kDim},
                                      {"num_hidden_layers", kLayers},
                                      {"num_attention_heads", 4},
                                      {"num_key_value_heads", 2},
                                      {"intermediate_size", kFfn},
                                      {"vocab_size", kTinyHfVocab},
                                      {"max_position_embeddings", 256},
                                      {"rope_theta", 10000.0},
                                      {"rms_norm_eps", 1e-5},
                                      {"tie_word_embeddings", true}});
  write_safetensors(folder / "model.safetensors", weights());
  write_file(folder / "tokenizer.json", tiny_file());
  write_file(folder / "tokenizer_config.json",
             {{"bos_token", "<s>"}, {"eos_token", "</s>"}, {"add_bos_token", true}});
  if (!generation_config.is_null()) {
    write_file(folder / "generation_config.json", generation_config);
  }
}

}  // namespace kvscope::test
