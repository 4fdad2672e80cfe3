#include "text/tokenizer.h"

#include "model/gguf/gguf_file.h"
#include "model/model.h"
#include "text/bpe_tokenizer.h"
#include "text/end_of_generation_ids.h"
#include "text/hf_tokenizer.h"
#include "text/sentencepiece_tokenizer.h"
#include "util/error.h"
#include "util/utf8.h"

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
        model.path(), printable_prefix(*type));
  }
  // tokenizer.json first: transformers' AutoTokenizer loads the fast tokenizer, which reads
  // it, when a folder has both; tokenizer.model is what it converts when there is none.
  const Model::SpecialTokenFlags flags = model.special_token_flags();
  std::unique_ptr<Tokenizer> tokenizer;
  if (const std::string json_path = model.tokenizer_json_path(); !json_path.empty()) {
    tokenizer = load_hf_tokenizer(json_path, flags);
  } else if (const std::string sp_path = model.tokenizer_model_path(); !sp_path.empty()) {
    tokenizer = load_sentencepiece_file(sp_path, flags);
  } else {
    throw_error<ModelError>("no tokenizer: {} has neither tokenizer.json nor tokenizer.model",
                            model.path());
  }
  return with_end_of_generation_ids(std::move(tokenizer), flags.eos_token_ids,
                                    flags.generation_config_path + ": eos_token_id");
}

}  // namespace kvscope
