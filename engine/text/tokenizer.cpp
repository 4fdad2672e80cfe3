#include "text/tokenizer.h"

#include "model/gguf/gguf_file.h"
#include "model/model.h"
#include "text/bpe_tokenizer.h"
#include "text/sentencepiece_tokenizer.h"
#include "util/error.h"

namespace kvscope {

std::string Tokenizer::decode(const std::vector<TokenId>& ids) const {
  std::string text;
  for (const TokenId id : ids) text += token_bytes(id);
  return text;
}

std::unique_ptr<Tokenizer> make_tokenizer(const Model& model) {
  if (const GgufFile* gguf = model.gguf()) {
    const std::optional<std::string> type = gguf->find_string("tokenizer.ggml.model");
    if (!type) {
      throw_error<ModelError>("no tokenizer: {} has no tokenizer.ggml.model metadata",
                              model.path());
    }
    if (*type == "llama") return load_sentencepiece_gguf(*gguf);
    if (*type == "gpt2") return make_bpe_tokenizer(*gguf);
    throw_error<ModelError>(
        "no tokenizer: {}: tokenizer.ggml.model \"{}\" is not supported (\"llama\" or \"gpt2\")",
        model.path(), *type);
  }
  const std::string sp_path = model.tokenizer_model_path();
  if (!sp_path.empty()) return load_sentencepiece_file(sp_path, model.special_token_flags());
  throw_error<ModelError>(
      "no tokenizer: {} has no tokenizer.model (only SentencePiece tokenizers are read from "
      "Hugging Face folders)",
      model.path());
}

}  // namespace kvscope
