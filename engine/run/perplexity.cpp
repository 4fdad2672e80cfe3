#include "run/perplexity.h"

#include <algorithm>

#include "util/error.h"

namespace kvscope {

std::vector<std::vector<TokenId>> perplexity_chunks(std::span<const TokenId> tokens,
                                                    std::int64_t n_ctx, TokenId bos,
                                                    std::int64_t max_chunks) {
  if (n_ctx < 2) {
    throw_error<UsageError>("a context of {} tokens scores nothing: perplexity needs at least 2",
                            n_ctx);
  }
  if (max_chunks < 1) throw_error<UsageError>("{} chunks: at least 1 is needed", max_chunks);
  const auto n = static_cast<std::int64_t>(tokens.size());
  if (n < 2 * n_ctx) {
    throw_error<UsageError>(
        "the text has {} tokens; a context of {} needs at least {} (2 x the context, as "
        "llama-perplexity asks)",
        n, n_ctx, 2 * n_ctx);
  }
  const std::int64_t n_chunks = std::min(n / n_ctx, max_chunks);
  std::vector<std::vector<TokenId>> chunks;
  chunks.reserve(static_cast<std::size_t>(n_chunks));
  for (std::int64_t c = 0; c < n_chunks; ++c) {
    const auto start = tokens.begin() + c * n_ctx;
    std::vector<TokenId>& chunk = chunks.emplace_back(start, start + n_ctx);
    if (bos >= 0) chunk.front() = bos;
  }
  return chunks;
}

}  // namespace kvscope
