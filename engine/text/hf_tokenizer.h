// A Hugging Face tokenizer.json (the `tokenizers` library's format) with a BPE model:
// byte-level vocabs (GPT-2, Llama 3, Qwen2, SmolLM2) and SentencePiece-style ones converted
// by transformers (Llama 2: Prepend/Replace normalizer, byte_fallback, Replace/ByteFallback/
// Fuse/Strip decoder). Encoding follows the library: added tokens are cut out first, each
// run between them is normalized, pre-tokenized and merged; the post-processor's template
// wraps a prompt in its special tokens (where BOS comes from).
//
// Special tokens come only from the Control parts of encode_parts(); user text (encode(),
// Text parts) never becomes one, as the library does with encode_special_tokens = true.
// Non-special added tokens are matched in any text, as the library matches them.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "model/model.h"
#include "text/tokenizer.h"

namespace kvscope {

// Reads `path` (tokenizer.json). `flags` (tokenizer_config.json) may replace the
// post-processor's BOS / EOS, as transformers does (see hf_tokenizer.cpp). Throws
// ModelError naming the file and the component or field at fault.
std::unique_ptr<Tokenizer> load_hf_tokenizer(const std::string& path,
                                             const Model::SpecialTokenFlags& flags = {});

// The same from the file's text; `source` names it in errors (the fuzz harness's entry).
std::unique_ptr<Tokenizer> parse_hf_tokenizer(std::string_view text, const std::string& source,
                                              const Model::SpecialTokenFlags& flags = {});

}  // namespace kvscope
