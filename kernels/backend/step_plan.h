// The host side of one forward step: which token goes where. Everything the kernels index
// by token (ids, positions, visible ranges, block tables, rows that need logits) is packed
// into one int array, uploaded with one copy per step. Plain C++ (testable without a GPU).
//
// The layout is fixed by the step's shape: every offset below is a function of (n_tokens,
// n_rows, n_groups, blocks_capacity) only, because each group's block tables are padded to
// blocks_capacity. Decode steps of one shape therefore differ only in the ints' values, so a
// CUDA graph captured with pointers into the uploaded array can be replayed (step_graph.h).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "kv/kv_cache_manager.h"
#include "run/backend.h"

namespace kvscope::cuda {

// The smallest blocks_capacity: short tables do not change the layout at every new block.
inline constexpr std::int64_t kMinBlocksCapacity = 16;

// Most tokens one step may carry: the matvec, attention and RoPE grids put tokens on grid
// dimension y, which CUDA caps at 65535.
inline constexpr std::int64_t kMaxStepTokens = 65535;

struct StepPlan {
  std::int64_t n_tokens = 0;
  std::int64_t n_rows = 0;    // rows of logits (all_logits chunks give every token one)
  std::int64_t max_keys = 0;  // most keys any token of the step attends to
  // Ints each group's blocks section holds (its tables, then kNoBlock padding): a power of
  // two >= kMinBlocksCapacity fitting every group's tables, or the caller's minimum.
  std::int64_t blocks_capacity = 0;
  // Packed ints, offsets into it below:
  //   tokens [n_tokens], pos [n_tokens], logit_rows [n_rows] (token index of each row),
  //   then per layer group g: first [n_tokens], table_start [n_tokens],
  //   blocks [blocks_capacity] (the chunks' tables concatenated, then kNoBlock),
  //   and for a group with an exact tail (kv/exact_tail.h) shadows [blocks_capacity]: each
  //   entry of blocks' exact-tail shadow index, or -1 (no copy, padding).
  std::vector<int> ints;
  std::int64_t tokens_at = 0, pos_at = 0, rows_at = 0;
  std::vector<std::int64_t> first_at, table_start_at, blocks_at;  // [n_groups]
  std::vector<std::int64_t> shadows_at;  // [n_groups], -1 for a group without an exact tail
};

// A decode step: at least one chunk, each appending exactly one token. Their shape repeats
// step after step (a prompt chunk's rarely does), so these are the steps worth a CUDA graph.
bool is_decode_step(std::span<const SequenceChunk> chunks);

// Validates and packs the chunks: UsageError for a token id outside [0, vocab), a position
// at or past max_positions or not reserved in the KV cache (grow first), or a negative
// min_blocks_capacity, naming the numbers. blocks_capacity is at least min_blocks_capacity
// (pass the previous step's to keep the layout while tables shrink). logit_rows false: the
// step computes no logits (the GPU's part of a split before the model's end, whose steps end
// with the residual stream: run/split_backend.h), so it has no rows (n_rows 0, logit_rows
// empty) and the backend reserves no logits, final hidden states or picks for it.
StepPlan plan_step(std::span<const SequenceChunk> chunks, const KvCacheManager& kv,
                   std::int64_t vocab, std::int64_t max_positions,
                   std::int64_t min_blocks_capacity = 0, bool logit_rows = true);

}  // namespace kvscope::cuda
