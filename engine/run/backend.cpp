#include "run/backend.h"

#include "run/greedy.h"
#include "util/error.h"

namespace kvscope {

void Backend::forward_greedy(std::span<const SequenceChunk> chunks, KvCacheManager& kv,
                             std::vector<TokenId>& picks) {
  forward(chunks, kv, greedy_logits_);
  const std::span<const float> logits(greedy_logits_);
  picks.clear();
  std::size_t rows = 0;
  for (const SequenceChunk& c : chunks) rows += c.all_logits ? c.tokens.size() : 1;
  if (logits.empty() || rows == 0) return;
  const std::size_t vocab = logits.size() / rows;
  for (std::size_t r = 0; r < rows; ++r) {
    picks.push_back(greedy_pick(logits.subspan(r * vocab, vocab)));
  }
}

void Backend::forward_layers(std::span<const SequenceChunk> chunks, KvCacheManager& kv,
                             std::vector<float>& hidden, std::vector<float>& logits) {
  (void)chunks, (void)kv, (void)hidden, (void)logits;
  throw_error<UsageError>("backend {} runs the whole model: it takes tokens, not a hidden state",
                          name());
}

}  // namespace kvscope
