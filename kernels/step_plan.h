// The host side of one forward step: which token goes where. Everything the kernels index
// by token (ids, positions, visible ranges, block tables, rows that need logits) is packed
// into one int array, uploaded with one copy per step. Plain C++ (testable without a GPU).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "kv/kv_cache_manager.h"
#include "run/backend.h"

namespace kvscope::cuda {

struct StepPlan {
  std::int64_t n_tokens = 0;
  std::int64_t n_rows = 0;    // rows of logits (all_logits chunks give every token one)
  std::int64_t max_keys = 0;  // most keys any token of the step attends to
  // Packed ints, offsets into it below:
  //   tokens [n_tokens], pos [n_tokens], logit_rows [n_rows] (token index of each row),
  //   then per layer group g: first [n_tokens], table_start [n_tokens], blocks [...]
  std::vector<int> ints;
  std::int64_t tokens_at = 0, pos_at = 0, rows_at = 0;
  std::vector<std::int64_t> first_at, table_start_at, blocks_at;  // [n_groups]
};

// Validates and packs the chunks: UsageError for a token id outside [0, vocab), a position
// at or past max_positions or not reserved in the KV cache (grow first), naming the numbers.
StepPlan plan_step(std::span<const SequenceChunk> chunks, const KvCacheManager& kv,
                   std::int64_t vocab, std::int64_t max_positions);

}  // namespace kvscope::cuda
