// Scheduler: kept prefixes. A request with keep_cache leaves its sequence in the KV cache
// when it ends; a later request whose prompt starts with the same tokens forks it and
// truncates the fork to the shared part, so those tokens are neither recomputed nor
// stored twice (regenerating a reply, the next turn of a chat).
#include <algorithm>

#include "run/scheduler/scheduler.h"
#include "run/scheduler/scheduler_active.h"

namespace kvscope {

namespace {

std::int64_t common_prefix(std::span<const TokenId> a, std::span<const TokenId> b) {
  const auto [ia, ib] = std::ranges::mismatch(a, b);
  return static_cast<std::int64_t>(ia - a.begin());
}

}  // namespace

// Adds a's sequence to the cache: empty, or forked from the kept prefix sharing the most
// of its prompt. The prompt's last token always runs: its logits give the first token.
void Scheduler::start_sequence(Active& a) {
  Kept* best = nullptr;
  std::int64_t best_len = 0;
  const std::span<const TokenId> prompt(a.tokens.data(), static_cast<std::size_t>(a.n_prompt - 1));
  for (Kept& k : kept_) {
    // A sliding window may have released blocks the shared part would need.
    const std::int64_t len = common_prefix(prompt, k.tokens);
    if (len > best_len && kv_.can_truncate(k.seq, len)) {
      best = &k;
      best_len = len;
    }
  }
  if (best == nullptr) {
    kv_.add_sequence(a.seq);
    return;
  }
  kv_.fork(best->seq, a.seq);
  kv_.truncate(a.seq, best_len);
  best->last_used = ++use_clock_;
  a.n_cached = best_len;
  a.reused = best_len;
  stats_.reused_tokens += best_len;
}

// Called when `a` ends while its sequence is in the cache.
void Scheduler::keep_or_free(Active& a, FinishReason reason) {
  const bool keep = a.request.keep_cache && reason != FinishReason::Error && a.n_cached > 0 &&
                    !kv_.is_preempted(a.seq);
  if (!keep) {
    kv_.free_sequence(a.seq);
    return;
  }
  Kept k;
  k.id = a.id;
  k.seq = a.seq;
  k.tokens.assign(a.tokens.begin(), a.tokens.begin() + a.n_cached);
  k.last_used = ++use_clock_;
  kept_.push_back(std::move(k));
}

void Scheduler::release_cache(RequestId id) {
  auto it = std::ranges::find(kept_, id, &Kept::id);
  if (it == kept_.end()) return;
  kv_.free_sequence(it->seq);
  kept_.erase(it);
}

void Scheduler::release_all_caches() {
  for (const Kept& k : kept_) kv_.free_sequence(k.seq);
  kept_.clear();
}

// Releases the least recently used kept prefix; false when there is none.
bool Scheduler::evict_kept() {
  if (kept_.empty()) return false;
  auto lru = std::ranges::min_element(kept_, {}, &Kept::last_used);
  kv_.free_sequence(lru->seq);
  kept_.erase(lru);
  ++stats_.evictions;
  return true;
}

// Live sequences come before kept prefixes: release prefixes until `a` can grow by n.
void Scheduler::evict_kept_until_fits(const Active& a, std::int64_t n) {
  while (!kv_.can_grow(a.seq, n) && evict_kept()) {
  }
}

}  // namespace kvscope
