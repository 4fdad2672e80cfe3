#include "support/gguf_tokenizer_json.h"

namespace kvscope::test {

nlohmann::json tokenizer_json_from_gguf(const GgufFile& gguf) {
  using nlohmann::json;
  constexpr std::int64_t kControlToken = 3;  // llama.cpp's LLAMA_TOKEN_TYPE_CONTROL
  const auto tokens = gguf.get_string_array("tokenizer.ggml.tokens");
  const auto types = gguf.get_int_array("tokenizer.ggml.token_type");
  json vocab = json::object();
  json added = json::array();
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    vocab[tokens[i]] = i;
    if (i < types.size() && types[i] == kControlToken) {
      added.push_back({{"id", i}, {"content", tokens[i]}, {"special", true}});
    }
  }
  return {{"model",
           {{"type", "BPE"},
            {"vocab", vocab},
            {"merges", gguf.get_string_array("tokenizer.ggml.merges")}}},
          {"added_tokens", added},
          {"pre_tokenizer",
           {{"type", "Sequence"},
            {"pretokenizers",
             {{{"type", "Digits"}, {"individual_digits", true}},
              {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", true}}}}}},
          {"decoder", {{"type", "ByteLevel"}}}};
}

}  // namespace kvscope::test
