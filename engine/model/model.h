// A loaded model: its ModelSpec, views of every weight tensor (in place, from the file
// maps), and what the tokenizer and chat template need. Opened from a GGUF file or a
// Hugging Face folder (config.json + *.safetensors + tokenizer.model).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "model/model_spec.h"
#include "model/sampling_defaults.h"
#include "quant/tensor_type.h"

namespace kvscope {

class GgufFile;

// A 2-D (or 1-D) weight: `rows` rows of `cols` values each, row-major, stored as `type`.
// For projections, cols is the input size and rows the output size: y = W x.
struct WeightView {
  std::string name;
  TensorType type = TensorType::F32;
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  const void* data = nullptr;

  std::int64_t row_bytes() const;
  const void* row(std::int64_t r) const;
  explicit operator bool() const { return data != nullptr; }
};

struct LayerWeights {
  WeightView attn_norm;       // [dim]
  WeightView wq;              // [n_heads*head_dim][dim]
  WeightView wk;              // [n_kv_heads*head_dim][dim]
  WeightView wv;              // [n_kv_heads*head_dim][dim]
  WeightView bq, bk, bv;      // optional biases (qwen2)
  WeightView q_norm;          // [head_dim] per-head RMSNorm of q (spec.qk_norm)
  WeightView k_norm;          // [head_dim] per-head RMSNorm of k (spec.qk_norm)
  WeightView wo;              // [dim][n_heads*head_dim]
  WeightView post_attn_norm;  // [dim] RMSNorm of the attention output (spec.post_norms)
  WeightView ffn_norm;        // [dim]
  WeightView w_gate;          // [ffn_dim][dim]   (ffn_gate / gate_proj / w1)
  WeightView w_up;            // [ffn_dim][dim]   (ffn_up / up_proj / w3)
  WeightView w_down;          // [dim][ffn_dim]   (ffn_down / down_proj / w2)
  WeightView post_ffn_norm;   // [dim] RMSNorm of the FFN output (spec.post_norms)
};

struct ModelWeights {
  WeightView token_embd;  // [vocab][dim]
  std::vector<LayerWeights> layers;
  WeightView output_norm;  // [dim]
  WeightView output;       // [vocab][dim]; == token_embd when embeddings are tied
};

enum class ModelFormat { Gguf, HuggingFace };

class Model {
 public:
  virtual ~Model() = default;

  const ModelSpec& spec() const { return spec_; }
  const ModelWeights& weights() const { return weights_; }
  ModelFormat format() const { return format_; }
  const std::string& path() const { return path_; }

  // The GGUF file, when the model came from one (for the embedded tokenizer vocab).
  virtual const GgufFile* gguf() const { return nullptr; }
  // tokenizer.model beside a HF folder's weights (empty when absent).
  virtual std::string tokenizer_model_path() const { return {}; }
  // tokenizer.json (HF tokenizers library format) beside a HF folder's weights (empty when
  // absent); preferred over tokenizer.model, as transformers' fast tokenizer reads it.
  virtual std::string tokenizer_json_path() const { return {}; }
  // tokenizer_config.json of a HF folder (empty when absent).
  virtual std::string tokenizer_config_path() const { return {}; }
  // The Jinja chat template text, if the file carries one (never executed).
  virtual std::optional<std::string> chat_template() const { return std::nullopt; }

  // Whether prompts start with BOS / end with EOS, where a HF folder's tokenizer_config.json
  // says (add_bos_token / add_eos_token); unset: the tokenizer's own default. GGUF files
  // carry theirs in the vocab metadata the tokenizer reads.
  struct SpecialTokenFlags {
    std::optional<bool> add_bos;
    std::optional<bool> add_eos;
    // tokenizer_config.json's bos_token / eos_token / pad_token text (unset when absent).
    std::optional<std::string> bos_token;
    std::optional<std::string> eos_token;
    std::optional<std::string> pad_token;
    std::string config_path;  // that file, for errors ("" when the folder has none)
    // generation_config.json's eos_token_id (an int or a list: Llama 3 stops on three ids),
    // checked against the vocab size of config.json; every one ends a generation.
    std::vector<std::int64_t> eos_token_ids;
    std::string generation_config_path;  // that file, for errors
  };
  virtual SpecialTokenFlags special_token_flags() const { return {}; }

  // The sampling values the model's folder publishes (generation_config.json); none for a
  // GGUF file. run/model_sampling.h makes a request's SamplingParams from them.
  const SamplingDefaults& sampling_defaults() const { return sampling_defaults_; }

  // Total bytes of all weight tensors as stored (what a backend must hold).
  std::uint64_t weight_bytes() const;
  // The bytes of what one side of a model split between two backends stores: the tensors of
  // layers [begin, end), the token embedding when `embedding`, the output head and its norm
  // when `output` (tied embeddings counted once).
  std::uint64_t weight_bytes(std::int64_t begin, std::int64_t end, bool embedding,
                             bool output) const;
  // Calls fn once per stored weight tensor (a tied output, aliasing token_embd, once).
  void for_each_weight(const std::function<void(const WeightView&)>& fn) const;

 protected:
  ModelSpec spec_;
  ModelWeights weights_;
  ModelFormat format_ = ModelFormat::Gguf;
  std::string path_;
  SamplingDefaults sampling_defaults_;
};

// Opens a GGUF file or a HF folder (a directory, or a path to its config.json).
// Throws ModelError naming the file, field or tensor at fault.
std::unique_ptr<Model> load_model(const std::string& path);

}  // namespace kvscope
