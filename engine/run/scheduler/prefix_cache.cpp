#include "run/scheduler/prefix_cache.h"

#include <algorithm>

namespace kvscope {

namespace {

std::int64_t common_prefix(std::span<const TokenId> a, std::span<const TokenId> b) {
  const auto [ia, ib] = std::ranges::mismatch(a, b);
  return static_cast<std::int64_t>(ia - a.begin());
}

}  // namespace

std::int64_t PrefixCache::start(SeqId seq, std::span<const TokenId> prefix) {
  Kept* best = nullptr;
  std::int64_t best_len = 0;
  for (Kept& k : kept_) {
    // A sliding window may have released blocks the shared part would need.
    const std::int64_t len = common_prefix(prefix, k.tokens);
    if (len > best_len && kv_.can_truncate(k.seq, len)) {
      best = &k;
      best_len = len;
    }
  }
  if (best == nullptr) {
    kv_.add_sequence(seq);
    return 0;
  }
  kv_.fork(best->seq, seq);
  kv_.truncate(seq, best_len);
  best->last_used = ++use_clock_;
  return best_len;
}

void PrefixCache::keep(RequestId id, SeqId seq, std::span<const TokenId> tokens) {
  kept_.push_back({id, seq, std::vector<TokenId>(tokens.begin(), tokens.end()), ++use_clock_});
}

void PrefixCache::release(RequestId id) {
  auto it = std::ranges::find(kept_, id, &Kept::id);
  if (it == kept_.end()) return;
  kv_.free_sequence(it->seq);
  kept_.erase(it);
}

void PrefixCache::release_all() {
  for (const Kept& k : kept_) kv_.free_sequence(k.seq);
  kept_.clear();
}

std::int64_t PrefixCache::evict_until_fits(SeqId seq, std::int64_t n) {
  std::int64_t evicted = 0;
  while (!kept_.empty() && !kv_.can_grow(seq, n)) {
    auto lru = std::ranges::min_element(kept_, {}, &Kept::last_used);
    kv_.free_sequence(lru->seq);
    kept_.erase(lru);
    ++evicted;
  }
  return evicted;
}

SeqId PrefixCache::sequence_of(RequestId id) const {
  auto it = std::ranges::find(kept_, id, &Kept::id);
  return it == kept_.end() ? -1 : it->seq;
}

}  // namespace kvscope
