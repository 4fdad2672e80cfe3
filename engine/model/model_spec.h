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

// The gate of the FFN: silu(gate) * up (Llama, Qwen) or gelu_tanh(gate) * up (Gemma).
enum class FfnActivation { Silu, GeluTanh };

struct ModelSpec {
  std::string architecture;  // llama, qwen2, qwen3, gemma2, gemma3, mistral (llama-shaped)
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
  // With a sliding window: 0, every layer slides; P > 0, layer l slides when l % P < P - 1, so
  // the last layer of every P attends to the whole context (Gemma 3: 6, as llama.cpp reads it).
  std::int64_t sliding_window_period = 0;
  // RoPE of the sliding layers, where it differs: Gemma 3 turns them with base 10000 and no
  // scaling, its global layers with rope_theta (1e6) and rope_scaling. 0: rope_theta.
  double rope_theta_local = 0.0;
  bool rope_scaling_local = true;  // whether the sliding layers apply rope_scaling
  bool tied_embeddings = false;    // output projection reuses token_embd
  bool qkv_bias = false;           // qwen2 has biases on Q, K and V
  // Per-head RMSNorm of q and k (weights [head_dim]) before RoPE: Qwen 3, Gemma 3.
  bool qk_norm = false;
  // RMSNorm of each sub-layer's output before the residual add (Gemma 2 and 3): x += norm(attn),
  // x += norm(ffn).
  bool post_norms = false;
  FfnActivation ffn_activation = FfnActivation::Silu;
  double embedding_scale = 1.0;  // token embeddings are multiplied by this (Gemma: sqrt(dim))
  // Scores are q.k * attention_scale; 0: 1 / sqrt(head_dim). Gemma's query_pre_attn_scalar^-1/2.
  double attention_scale = 0.0;
  // Soft-capping, c * tanh(x / c), 0: off. attn_softcap bends every scaled attention score
  // before the softmax, final_softcap every output logit (Gemma 2: 50 and 30).
  double attn_softcap = 0.0;
  double final_softcap = 0.0;

  std::int64_t q_dim() const { return n_heads * head_dim; }
  std::int64_t kv_dim() const { return n_kv_heads * head_dim; }
  std::int64_t gqa_group() const { return n_kv_heads ? n_heads / n_kv_heads : 0; }
  // Whether layer l attends through the sliding window.
  bool layer_slides(std::int64_t layer) const;
  // The window of layer l: sliding_window where it slides, 0 (everything) elsewhere.
  std::int64_t layer_window(std::int64_t layer) const;
  // The factor q.k is multiplied by.
  double score_scale() const;
  // Whether the sliding layers turn q and k by a RoPE of their own: another base, or no
  // scaling where the others scale (Gemma 3). local_rope_config (cpu/rope.h) builds it.
  bool has_local_rope() const;
};

// Sets what an architecture computes beyond the llama shape, as llama.cpp reads its GGUF
// files, from the fields already set (n_layers, dim, n_heads, head_dim): "qwen3" q/k norms;
// "gemma3" a window period of 6, base 10000 and no scaling on the sliding layers, q/k norms,
// post-norms, a GELU gate, embeddings times sqrt(dim) and scores times 1 / sqrt(head_dim)
// (1 / sqrt(dim / n_heads) for the 62-layer 27B, whose query_pre_attn_scalar that is);
// "gemma2" the same with a period of 2, one RoPE, no q/k norms (46 layers for its 27B) and
// soft-capping, attention scores at 50 and logits at 30. The GGUF norm weights already hold
// Gemma's 1 + w (a Hugging Face folder's loader adds the 1). A file's own keys may then override
// these. Other architectures are left as they are.
void apply_architecture_defaults(ModelSpec& spec);

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
