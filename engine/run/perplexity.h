// How a text is cut for perplexity, exactly as llama.cpp's llama-perplexity does it
// (tools/perplexity/perplexity.cpp, perplexity()), so the two report the same number:
//   - the whole text is tokenized once, with BOS first when the vocab adds one;
//   - it is cut into consecutive chunks of exactly n_ctx tokens (stride n_ctx; the tail
//     that does not fill a chunk is dropped), and a text shorter than 2 x n_ctx tokens is
//     refused;
//   - each chunk's first token is overwritten with BOS when the vocab adds one (so the
//     text token there is lost, never scored and never seen);
//   - each chunk runs from an empty cache, and only its second half is scored: the logits
//     at positions first = n_ctx / 2 .. n_ctx - 2 predict the tokens at first + 1 ..
//     n_ctx - 1 (n_ctx - 1 - first tokens per chunk);
//   - PPL = exp(mean negative log-likelihood over every scored token of every chunk).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "text/tokenizer.h"

namespace kvscope {

// The first position whose logits are scored in a chunk of n_ctx tokens.
constexpr std::int64_t perplexity_first_scored(std::int64_t n_ctx) {
  return n_ctx / 2;
}

// The chunks to evaluate, at most max_chunks of them: `tokens` (the tokenized text, BOS
// already first when the vocab adds one) cut every n_ctx tokens, each chunk's first token
// replaced by `bos` when bos >= 0 (pass -1 when the vocab adds no BOS). Throws UsageError
// for n_ctx < 2, max_chunks < 1, or fewer than 2 x n_ctx tokens (naming both numbers).
std::vector<std::vector<TokenId>> perplexity_chunks(std::span<const TokenId> tokens,
                                                    std::int64_t n_ctx, TokenId bos,
                                                    std::int64_t max_chunks);

}  // namespace kvscope
