// Byte-level BPE for GGUF "gpt2" vocabs (GPT-2, SmolLM2, Qwen2, Llama 3): text is split by
// the vocab's pre-tokenizer regexes (tokenizer.ggml.pre), each piece's bytes become their
// byte-alphabet tokens, and adjacent tokens are merged lowest rank first
// (tokenizer.ggml.merges, rank = index) until no merge applies, by BpeMerges, the merge
// engine the tokenizer.json reader shares.
//
// Special tokens (token types CONTROL and USER_DEFINED) are matched only inside the
// Control parts of encode_parts(); text in Text parts and encode() never becomes one. The
// text between two special tokens is tokenized as one run even when it spans Control and
// Text parts, so a rendered prompt gets the same ids as llama.cpp gives the whole string.
#pragma once

#include <memory>

#include "text/tokenizer.h"

namespace kvscope {

class GgufFile;

// Builds the tokenizer from tokenizer.ggml.{model,tokens,token_type,merges,pre,
// bos_token_id,eos_token_id,eot_token_id,eom_token_id,add_bos_token}. Throws ModelError
// naming the key (and index) at fault: a merge naming a token that does not exist, a
// special id out of range, arrays of different lengths, a duplicate token, an unknown
// token type. An unknown pre-tokenizer falls back to GPT-2's rules; kind() says so.
std::unique_ptr<Tokenizer> make_bpe_tokenizer(const GgufFile& gguf);

}  // namespace kvscope
