// A byte-level BPE GGUF vocab (tokenizer.ggml.model "gpt2", as SmolLM2's) written as a
// Hugging Face tokenizer.json by the tests' own code: the tokens as the BPE vocab, the merges,
// control tokens (token_type 3) as special added tokens, and SmolLM2's pre-tokenizer
// (single digits, then byte-level with the GPT-2 regex). No post_processor: whether a prompt
// starts with BOS is tokenizer_config.json's add_bos_token, as in SmolLM2's own folder.
#pragma once

#include <nlohmann/json.hpp>

#include "model/gguf/gguf_file.h"

namespace kvscope::test {

nlohmann::json tokenizer_json_from_gguf(const GgufFile& gguf);

}  // namespace kvscope::test
