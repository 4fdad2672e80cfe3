// A model in a GGUF file (llama.cpp's format): the spec from "{arch}.*" metadata, the
// weights viewed in place in the file map, the tokenizer vocab and chat template from
// "tokenizer.*" metadata. Architectures: "llama" (also Mistral, TinyLlama, SmolLM) and
// "qwen2".
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "model/gguf/gguf_file.h"
#include "model/model.h"

namespace kvscope {

// Whether the engine runs a GGUF general.architecture ("llama", "qwen2"); the download
// catalog asks this before offering a model.
bool gguf_architecture_supported(std::string_view architecture);
// Those architectures for a message: "llama, qwen2, qwen3, gemma2 and gemma3".
std::string gguf_supported_architectures_text();

// The spec the metadata describes (validated). vocab_size is the row count of
// token_embd.weight. Throws ModelError naming the key: "llama.block_count: missing".
ModelSpec gguf_model_spec(const GgufFile& file);

class GgufModel : public Model {
 public:
  // Opens and validates `path`; every tensor the spec needs must be present with the right
  // shape and a supported type. Throws ModelError naming the key or tensor.
  explicit GgufModel(const std::string& path);

  const GgufFile* gguf() const override { return file_.get(); }
  std::optional<std::string> chat_template() const override { return chat_template_; }

 private:
  void check_layers() const;
  void bind_weights();
  WeightView view(const std::string& name, std::int64_t rows, std::int64_t cols) const;

  std::unique_ptr<GgufFile> file_;
  std::optional<std::string> chat_template_;
};

}  // namespace kvscope
