// A model in a Hugging Face folder: config.json, the weights in model.safetensors or in
// the shards model.safetensors.index.json lists, and beside them tokenizer.json and/or
// tokenizer.model, tokenizer_config.json (chat template, BOS / EOS) and
// generation_config.json (the ids that end a generation, the sampling values a chat starts
// from). Weights are viewed in place in the shard maps, except Gemma's norms, kept as 1 + w.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "model/model.h"
#include "model/safetensors_file.h"

namespace kvscope {

class HfModel : public Model {
 public:
  // `folder` holds config.json. Throws ModelError naming the file, field or tensor.
  explicit HfModel(const std::string& folder);

  std::string tokenizer_model_path() const override { return tokenizer_model_; }
  std::string tokenizer_json_path() const override { return tokenizer_json_; }
  std::string tokenizer_config_path() const override { return tokenizer_config_; }
  std::optional<std::string> chat_template() const override { return chat_template_; }
  SpecialTokenFlags special_token_flags() const override { return special_tokens_; }

  // The opened weight files, in file name order.
  const std::vector<std::unique_ptr<SafetensorsFile>>& shards() const { return shards_; }

 private:
  void open_weights(const std::string& folder);
  void open_index(const std::string& folder, const std::string& index_path);
  void bind_weights(const std::string& folder);
  WeightView view(const std::string& name, std::int64_t rows, std::int64_t cols) const;
  WeightView vector_view(const std::string& name, std::int64_t n) const;
  std::string text_model_prefix() const;
  WeightView norm_view(const std::string& name, std::int64_t n);
  void read_tokenizer_files(const std::string& folder);
  void read_generation_config(const std::string& path);

  std::vector<std::unique_ptr<SafetensorsFile>> shards_;
  // Every tensor by name, pointing into the shard that holds it.
  std::map<std::string, const SafetensorsTensor*, std::less<>> tensors_;
  // Gemma's norm weights as 1 + w in f32 (norm_view), which their WeightViews point into.
  std::vector<std::vector<float>> shifted_norms_;
  std::string tokenizer_model_;
  std::string tokenizer_json_;
  std::string tokenizer_config_;
  std::optional<std::string> chat_template_;
  SpecialTokenFlags special_tokens_;
};

}  // namespace kvscope
