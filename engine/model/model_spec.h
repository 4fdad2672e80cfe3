// The shape and hyper-parameters of a Llama-family decoder, read from a GGUF file or a
// Hugging Face config.json. Names follow the ones users see in config files.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace kvscope {

// Which elements RoPE rotates together. llama-architecture GGUF files store the Q/K rows
// permuted (by the converter) so that adjacent pairs (x0,x1),(x2,x3).. rotate; HF
// safetensors and qwen2 GGUFs keep the original layout, where x[i] pairs with
// x[i + rope_dim/2] ("NeoX" / half-split). Both compute the same model.
enum class RopePairing { Adjacent, HalfSplit };

enum class RopeScalingType { None, Linear, Dynamic, Llama3, Yarn };

struct RopeScaling {
  RopeScalingType type = RopeScalingType::None;
  double factor = 1.0;                // linear / dynamic / llama3 / yarn factor
  std::int64_t original_context = 0;  // original_max_position_embeddings (0 = unknown)
  double low_freq_factor = 1.0;       // llama3
  double high_freq_factor = 4.0;      // llama3
};

struct ModelSpec {
  std::string architecture;  // "llama", "qwen2", "mistral" (llama-shaped)
  std::string name;          // general.name or the folder name
  std::int64_t n_layers = 0;
  std::int64_t dim = 0;  // hidden size (n_embd)
  std::int64_t n_heads = 0;
  std::int64_t n_kv_heads = 0;
  std::int64_t head_dim = 0;
  std::int64_t rope_dim = 0;  // dimensions rotated per head (== head_dim for these families)
  std::int64_t ffn_dim = 0;
  std::int64_t vocab_size = 0;
  std::int64_t context_length = 0;
  double rope_theta = 10000.0;
  RopeScaling rope_scaling;
  RopePairing rope_pairing = RopePairing::Adjacent;
  double norm_eps = 1e-5;
  std::int64_t sliding_window = 0;  // 0: full attention in every layer
  bool tied_embeddings = false;     // output projection reuses token_embd
  bool qkv_bias = false;            // qwen2 has biases on Q, K and V

  std::int64_t q_dim() const { return n_heads * head_dim; }
  std::int64_t kv_dim() const { return n_kv_heads * head_dim; }
  std::int64_t gqa_group() const { return n_kv_heads ? n_heads / n_kv_heads : 0; }
};

// Throws ModelError naming the field when a value is missing, zero, negative or inconsistent
// (n_heads not a multiple of n_kv_heads, head_dim odd, ...).
void validate(const ModelSpec& spec);

// head_dim as a loader should set it: the file's explicit value when it has one (which may
// make n_heads * head_dim differ from dim, as in Mistral-Nemo), else dim / n_heads, which
// must then divide evenly. `dim_field`/`heads_field` name the fields for the message.
std::int64_t resolve_head_dim(std::int64_t dim, std::int64_t n_heads,
                              std::optional<std::int64_t> explicit_head_dim,
                              std::string_view dim_field, std::string_view heads_field);

// "none", "linear", "dynamic", "llama3", "yarn".
std::string_view rope_scaling_name(RopeScalingType type);

}  // namespace kvscope
