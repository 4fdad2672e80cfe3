// Kept prefixes: the sequences ended keep_cache requests leave in the KV cache, so a later
// request whose prompt starts with the same tokens (regenerating a reply, the next turn of
// a chat) forks one instead of recomputing and storing those tokens again. The fork shares
// the kept blocks copy-on-write. Kept prefixes give way first, least recently used first,
// whenever a live sequence needs blocks.
//
// Not thread-safe: the scheduler's thread owns it.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "kv/kv_cache_manager.h"
#include "run/request.h"

namespace kvscope {

class PrefixCache {
 public:
  explicit PrefixCache(KvCacheManager& kv) : kv_(kv) {}

  // Adds the new sequence `seq` to the cache: forked from the kept prefix that shares the
  // most of `prefix` and truncated to the shared tokens, or empty when none shares any (or
  // a sliding window has released blocks the shared part would need). Returns the number of
  // tokens it starts with.
  std::int64_t start(SeqId seq, std::span<const TokenId> prefix);
  // Keeps the ended request's sequence, which holds `tokens`.
  void keep(RequestId id, SeqId seq, std::span<const TokenId> tokens);
  // Frees the prefix `id` kept (nothing when it kept none), or all of them.
  void release(RequestId id);
  void release_all();
  // Frees kept prefixes, least recently used first, until `seq` can grow by n tokens or
  // none is left. Returns how many it freed.
  std::int64_t evict_until_fits(SeqId seq, std::int64_t n);

  std::int64_t size() const { return static_cast<std::int64_t>(kept_.size()); }
  // The sequence `id` kept, or -1.
  SeqId sequence_of(RequestId id) const;

 private:
  struct Kept {
    RequestId id = 0;
    SeqId seq = 0;
    std::vector<TokenId> tokens;  // [cached tokens] what the sequence holds
    std::uint64_t last_used = 0;
  };

  KvCacheManager& kv_;
  std::vector<Kept> kept_;
  std::uint64_t use_clock_ = 0;
};

}  // namespace kvscope
