// PrefixSharingScenario: the prefix-sharing demo's model, Qt-free. N parallel samples of
// one prompt run through the real KvCacheManager twice:
//   shared    the prompt is grown once and forked N - 1 times (every block shared,
//             refcount N), then each sample grows one token at a time; the first write
//             into a shared, partly filled tail copies it (copy-on-write);
//   separate  N independent sequences, each grown by the whole prompt and then one
//             token at a time: what N separate copies of the prompt cost.
// Step 0 is the prefill and the forks; step k > 0 grows every sample by its k-th token.
// Every figure the page shows comes from the two managers' snapshots.
#pragma once

#include <cstdint>
#include <set>
#include <vector>

#include "kv/kv_cache_manager.h"

namespace kvscope {

struct PrefixSharingParams {
  std::int64_t prompt_tokens = 40;
  std::int64_t n_samples = 4;          // 1 .. 16
  std::int64_t generated_tokens = 24;  // per sample
  std::int64_t block_size = 16;
};

class PrefixSharingScenario {
 public:
  // UsageError when a parameter is out of range (naming it).
  explicit PrefixSharingScenario(const PrefixSharingParams& params);

  // The toy cache both managers use: 4 layers x 8 KV heads x head_dim 64 in f16 (8 KiB per
  // token), no host bytes (bookkeeping only), a pool as large as N separate copies need.
  static KvCacheConfig cache_config(const PrefixSharingParams& params);

  const PrefixSharingParams& params() const { return params_; }
  std::int64_t total_steps() const { return 1 + params_.generated_tokens; }
  std::int64_t steps_taken() const { return steps_taken_; }
  bool done() const { return steps_taken_ >= total_steps(); }
  // Runs the next step (nothing when done).
  void step();

  // Sample i is sequence i in both managers (sample 0 is the forked-from prompt).
  const KvCacheManager& shared() const { return shared_; }
  const KvCacheManager& separate() const { return separate_; }
  std::int64_t tokens_per_sample() const;
  // Copy-on-write copies grow() reported so far, and the blocks they created.
  std::int64_t cow_copies() const { return cow_copies_; }
  const std::set<BlockId>& copied_blocks() const { return copied_; }

 private:
  void prefill_and_fork();
  void decode_one_token();

  PrefixSharingParams params_;
  KvCacheManager shared_;
  KvCacheManager separate_;
  std::int64_t steps_taken_ = 0;
  std::int64_t cow_copies_ = 0;
  std::set<BlockId> copied_;
};

}  // namespace kvscope
