#include "support/hf_folder_from_gguf.h"

#include <cmath>
#include <fstream>
#include <ostream>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "model/gguf/gguf_model.h"
#include "quant/tensor_type.h"
#include "support/gguf_tokenizer_json.h"
#include "support/safetensors_writer.h"
#include "util/error.h"

namespace kvscope::test {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

void write_json(const fs::path& path, const json& j) {
  std::ofstream out(path);
  out << j.dump(2) << '\n';
  if (!out) throw std::runtime_error(path.string() + ": cannot write the file");
}

// llama.cpp's convert_hf_to_gguf.py stores Q/K row k of each head at
// (k % half) * 2 + k / half, so that RoPE rotates adjacent rows; HF row k is GGUF row
// 2 * (k % half) + k / half. Other matrices keep their rows.
std::int64_t gguf_row_of_hf_row(std::int64_t r, std::int64_t head_dim) {
  const std::int64_t half = head_dim / 2;
  const std::int64_t head = r / head_dim;
  const std::int64_t k = r % head_dim;
  return head * head_dim + 2 * (k % half) + k / half;
}

// Each row dequantized with the engine's own dequantize_row, less `shift`, then stored as BF16;
// `rope_head_dim` > 0 reorders Q/K rows to HF order.
SafetensorsEntry bf16_entry(std::string name, const WeightView& w, std::int64_t rope_head_dim = 0,
                            float shift = 0.0f) {
  SafetensorsEntry e;
  e.name = std::move(name);
  e.dtype = SafetensorsDtype::BF16;
  // Vectors (norms) are [cols] in PyTorch order, matrices [rows, cols].
  e.shape =
      w.rows == 1 ? std::vector<std::int64_t>{w.cols} : std::vector<std::int64_t>{w.rows, w.cols};
  e.write_data = [w, rope_head_dim, shift](std::ostream& out) {
    std::vector<float> row(static_cast<std::size_t>(w.cols));
    std::vector<char> bytes(static_cast<std::size_t>(row_bytes(TensorType::BF16, w.cols)));
    for (std::int64_t r = 0; r < w.rows; ++r) {
      const std::int64_t src = rope_head_dim > 0 ? gguf_row_of_hf_row(r, rope_head_dim) : r;
      dequantize_row(w.type, w.row(src), row.data(), w.cols);
      for (float& x : row) x -= shift;
      // The engine's own BF16 encoding: nearest even, little-endian as safetensors stores it.
      quantize_row(TensorType::BF16, row.data(), bytes.data(), w.cols);
      out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    }
  };
  return e;
}

bool is_gemma(const ModelSpec& s) {
  return s.architecture == "gemma2" || s.architecture == "gemma3";
}

// A norm as the folder stores it: Gemma's as w where the GGUF holds 1 + w.
SafetensorsEntry norm_entry(std::string name, const WeightView& w, const ModelSpec& s) {
  return bf16_entry(std::move(name), w, 0, is_gemma(s) ? 1.0f : 0.0f);
}

void add_layer(std::vector<SafetensorsEntry>& shard, const ModelSpec& s, const LayerWeights& l,
               const std::string& prefix, std::int64_t i) {
  const auto p = fmt::format("{}layers.{}.", prefix, i);
  // llama GGUFs hold Q/K rows permuted for adjacent pairs; qwen3's and Gemma's keep the HF order
  const std::int64_t rope_rows = s.rope_pairing == RopePairing::Adjacent ? s.head_dim : 0;
  shard.push_back(norm_entry(p + "input_layernorm.weight", l.attn_norm, s));
  shard.push_back(bf16_entry(p + "self_attn.q_proj.weight", l.wq, rope_rows));
  shard.push_back(bf16_entry(p + "self_attn.k_proj.weight", l.wk, rope_rows));
  shard.push_back(bf16_entry(p + "self_attn.v_proj.weight", l.wv));
  if (s.qk_norm) {
    shard.push_back(norm_entry(p + "self_attn.q_norm.weight", l.q_norm, s));
    shard.push_back(norm_entry(p + "self_attn.k_norm.weight", l.k_norm, s));
  }
  shard.push_back(bf16_entry(p + "self_attn.o_proj.weight", l.wo));
  if (s.post_norms) {  // Gemma's four norms a layer
    shard.push_back(norm_entry(p + "post_attention_layernorm.weight", l.post_attn_norm, s));
    shard.push_back(norm_entry(p + "pre_feedforward_layernorm.weight", l.ffn_norm, s));
    shard.push_back(norm_entry(p + "post_feedforward_layernorm.weight", l.post_ffn_norm, s));
  } else {
    shard.push_back(norm_entry(p + "post_attention_layernorm.weight", l.ffn_norm, s));
  }
  shard.push_back(bf16_entry(p + "mlp.gate_proj.weight", l.w_gate));
  shard.push_back(bf16_entry(p + "mlp.up_proj.weight", l.w_up));
  shard.push_back(bf16_entry(p + "mlp.down_proj.weight", l.w_down));
}

// The embedding in the first shard, layers split evenly in order, the final norm (and an
// untied lm_head) in the last: the way transformers' save_pretrained fills shards.
std::vector<std::vector<SafetensorsEntry>> shard_tensors(const Model& model, int n_shards,
                                                         const std::string& prefix) {
  const ModelSpec& s = model.spec();
  const ModelWeights& w = model.weights();
  std::vector<std::vector<SafetensorsEntry>> shards(static_cast<std::size_t>(n_shards));
  shards.front().push_back(bf16_entry(prefix + "embed_tokens.weight", w.token_embd));
  for (std::int64_t i = 0; i < s.n_layers; ++i) {
    add_layer(shards[static_cast<std::size_t>(i * n_shards / s.n_layers)], s,
              w.layers[static_cast<std::size_t>(i)], prefix, i);
  }
  shards.back().push_back(norm_entry(prefix + "norm.weight", w.output_norm, s));
  if (!s.tied_embeddings) shards.back().push_back(bf16_entry("lm_head.weight", w.output));
  return shards;
}

void write_weights(const Model& model, const fs::path& folder, int n_shards,
                   const std::string& prefix) {
  json weight_map = json::object();
  std::uint64_t total = 0;
  const auto shards = shard_tensors(model, n_shards, prefix);
  for (std::size_t k = 0; k < shards.size(); ++k) {
    const auto file = fmt::format("model-{:05}-of-{:05}.safetensors", k + 1, shards.size());
    write_safetensors(folder / file, shards[k]);
    for (const auto& t : shards[k]) {
      weight_map[t.name] = file;
      std::int64_t n = 2;
      for (const std::int64_t d : t.shape) n *= d;
      total += static_cast<std::uint64_t>(n);
    }
  }
  write_json(folder / "model.safetensors.index.json",
             {{"metadata", {{"total_size", total}}}, {"weight_map", weight_map}});
}

// What a Gemma config adds: Gemma2Config's or Gemma3TextConfig's fields.
void add_gemma_fields(const ModelSpec& s, json& config) {
  const bool gemma2 = s.architecture == "gemma2";
  config["architectures"] = {gemma2 ? "Gemma2ForCausalLM" : "Gemma3ForCausalLM"};
  config["model_type"] = gemma2 ? "gemma2" : "gemma3_text";
  config.erase("hidden_act");
  config["hidden_activation"] = "gelu_pytorch_tanh";
  config["query_pre_attn_scalar"] = std::llround(1.0 / (s.score_scale() * s.score_scale()));
  config["sliding_window"] = s.sliding_window;
  json layer_types = json::array();
  for (std::int64_t l = 0; l < s.n_layers; ++l) {
    layer_types.push_back(s.layer_slides(l) ? "sliding_attention" : "full_attention");
  }
  config["layer_types"] = layer_types;
  if (s.rope_theta_local != 0.0) config["rope_local_base_freq"] = s.rope_theta_local;
  const auto cap = [](double c) { return c != 0.0 ? json(c) : json(nullptr); };
  config["attn_logit_softcapping"] = cap(s.attn_softcap);
  config["final_logit_softcapping"] = cap(s.final_softcap);
}

json config_json(const ModelSpec& s, const GgufFile& gguf, bool conditional_generation) {
  const bool qwen3 = s.architecture == "qwen3";
  json config = {{"architectures", {qwen3 ? "Qwen3ForCausalLM" : "LlamaForCausalLM"}},
                 {"model_type", qwen3 ? "qwen3" : "llama"},
                 {"hidden_act", "silu"},
                 {"hidden_size", s.dim},
                 {"intermediate_size", s.ffn_dim},
                 {"num_hidden_layers", s.n_layers},
                 {"num_attention_heads", s.n_heads},
                 {"num_key_value_heads", s.n_kv_heads},
                 {"head_dim", s.head_dim},
                 {"max_position_embeddings", s.context_length},
                 {"rms_norm_eps", s.norm_eps},
                 {"rope_theta", s.rope_theta},
                 {"rope_scaling", nullptr},
                 {"attention_bias", false},
                 {"vocab_size", s.vocab_size},
                 {"tie_word_embeddings", s.tied_embeddings},
                 {"bos_token_id", gguf.get_int("tokenizer.ggml.bos_token_id")},
                 {"eos_token_id", gguf.get_int("tokenizer.ggml.eos_token_id")},
                 {"torch_dtype", "bfloat16"}};
  if (is_gemma(s)) add_gemma_fields(s, config);
  if (!conditional_generation) return config;
  // Gemma3ForConditionalGeneration: the text model's fields under text_config
  return {{"architectures", {"Gemma3ForConditionalGeneration"}},
          {"model_type", "gemma3"},
          {"text_config", config},
          {"torch_dtype", "bfloat16"}};
}

// The text of the token whose id metadata `key` holds; null when the file has no such key.
json token_text(const GgufFile& gguf, const std::vector<std::string>& tokens, const char* key) {
  const auto id = gguf.find_int(key);
  if (!id) return nullptr;
  return tokens.at(static_cast<std::size_t>(*id));
}

json tokenizer_config_json(const GgufFile& gguf) {
  const auto tokens = gguf.get_string_array("tokenizer.ggml.tokens");
  json config = {{"tokenizer_class", "GPT2Tokenizer"},
                 {"add_bos_token", gguf.find_bool("tokenizer.ggml.add_bos_token").value_or(false)},
                 {"add_eos_token", gguf.find_bool("tokenizer.ggml.add_eos_token").value_or(false)},
                 {"bos_token", token_text(gguf, tokens, "tokenizer.ggml.bos_token_id")},
                 {"eos_token", token_text(gguf, tokens, "tokenizer.ggml.eos_token_id")},
                 {"pad_token", token_text(gguf, tokens, "tokenizer.ggml.padding_token_id")},
                 {"unk_token", token_text(gguf, tokens, "tokenizer.ggml.unknown_token_id")}};
  if (auto tmpl = gguf.find_string("tokenizer.chat_template")) config["chat_template"] = *tmpl;
  return config;
}

json generation_config_json(const GgufFile& gguf) {
  json config = {{"bos_token_id", gguf.get_int("tokenizer.ggml.bos_token_id")},
                 {"eos_token_id", gguf.get_int("tokenizer.ggml.eos_token_id")}};
  if (auto pad = gguf.find_int("tokenizer.ggml.padding_token_id")) config["pad_token_id"] = *pad;
  return config;
}

// What this converter can express: a plain llama with adjacent-pair RoPE rows, a qwen3, a
// gemma2 or a gemma3 (as Gemma3ForConditionalGeneration too).
void check_convertible(const ModelSpec& s, const std::string& path, bool conditional_generation) {
  const bool llama = s.architecture == "llama" && s.rope_pairing == RopePairing::Adjacent;
  if ((!llama && s.architecture != "qwen3" && !is_gemma(s)) || s.qkv_bias ||
      s.rope_scaling.type != RopeScalingType::None || s.rope_dim != s.head_dim ||
      (conditional_generation && s.architecture != "gemma3")) {
    throw_error<ModelError>(
        "{}: only llama, qwen3, gemma2 and gemma3 GGUFs without biases or RoPE scaling are "
        "converted to a HF folder (and only gemma3 as Gemma3ForConditionalGeneration)",
        path);
  }
}

}  // namespace

void write_hf_folder_from_gguf(const std::string& gguf_path, const fs::path& folder, int n_shards,
                               bool conditional_generation) {
  const GgufModel model(gguf_path);
  const GgufFile& gguf = *model.gguf();
  check_convertible(model.spec(), gguf_path, conditional_generation);
  if (n_shards < 1 || n_shards > model.spec().n_layers) {
    throw std::invalid_argument(fmt::format("n_shards {}: 1 to the layer count", n_shards));
  }
  fs::create_directories(folder);
  write_weights(model, folder, n_shards,
                conditional_generation ? "language_model.model." : "model.");
  write_json(folder / "config.json", config_json(model.spec(), gguf, conditional_generation));
  write_json(folder / "tokenizer.json", tokenizer_json_from_gguf(gguf));
  write_json(folder / "tokenizer_config.json", tokenizer_config_json(gguf));
  write_json(folder / "generation_config.json", generation_config_json(gguf));
}

}  // namespace kvscope::test
