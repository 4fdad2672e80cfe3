#include "backend/step_plan.h"

#include <algorithm>
#include <bit>
#include <limits>

#include "util/error.h"

namespace kvscope::cuda {

namespace {

int to_int(std::int64_t v, const char* what) {
  if (v < 0 || v > std::numeric_limits<int>::max()) {
    throw_error<UsageError>("CUDA step: {} {} does not fit the kernels' 32-bit index", what, v);
  }
  return static_cast<int>(v);
}

// Block table entries group g's section must hold: every chunk's table, one after another.
std::int64_t group_blocks(std::span<const SequenceChunk> chunks, const KvCacheManager& kv,
                          std::int64_t g) {
  std::int64_t n = 0;
  for (const auto& c : chunks) n += kv.block_table(c.seq, g).n_blocks();
  return n;
}

// The smallest power of two >= kMinBlocksCapacity holding every group's tables, or more.
std::int64_t blocks_capacity(std::span<const SequenceChunk> chunks, const KvCacheManager& kv,
                             std::int64_t min_capacity) {
  if (min_capacity < 0) {
    throw_error<UsageError>("CUDA step: block table capacity {} is negative", min_capacity);
  }
  std::int64_t most = kMinBlocksCapacity;
  for (std::int64_t g = 0; g < kv.n_groups(); ++g) {
    most = std::max(most, group_blocks(chunks, kv, g));
  }
  const auto pow2 = static_cast<std::int64_t>(std::bit_ceil(static_cast<std::uint64_t>(most)));
  return to_int(std::max(min_capacity, pow2), "block table capacity");
}

// Appends a group's shadow section when it keeps an exact tail: the shadow index of each
// entry of its blocks section (-1: none, a dropped block, padding). The indices change as
// sequences grow, the layout does not.
void pack_shadows(std::span<const SequenceChunk> chunks, const KvCacheManager& kv, std::int64_t g,
                  StepPlan& p) {
  const ExactTail* tail = kv.exact_tail(g);
  if (tail == nullptr) {
    p.shadows_at.push_back(-1);
    return;
  }
  p.shadows_at.push_back(static_cast<std::int64_t>(p.ints.size()));
  for (const auto& c : chunks) {
    for (const BlockId b : kv.block_table(c.seq, g).blocks()) {
      p.ints.push_back(b == kNoBlock ? -1 : tail->shadow_index(b));
    }
  }
  p.ints.resize(static_cast<std::size_t>(p.shadows_at.back() + p.blocks_capacity), -1);
}

// Appends one layer group's arrays: first visible key and table offset per token, then the
// block tables of the chunks' sequences (kNoBlock where a window dropped a block; never read)
// padded with kNoBlock to p.blocks_capacity, so the next group starts at a fixed offset;
// then its shadow section, if any.
void pack_group(std::span<const SequenceChunk> chunks, const KvCacheManager& kv, std::int64_t g,
                StepPlan& p) {
  p.first_at.push_back(static_cast<std::int64_t>(p.ints.size()));
  for (const auto& c : chunks) {
    for (std::size_t i = 0; i < c.tokens.size(); ++i) {
      const std::int64_t pos = c.start_pos + static_cast<std::int64_t>(i);
      const std::int64_t first = kv.first_visible_position(g, pos);
      p.ints.push_back(to_int(first, "first visible position"));
      p.max_keys = std::max(p.max_keys, pos - first + 1);
    }
  }
  p.table_start_at.push_back(static_cast<std::int64_t>(p.ints.size()));
  std::int64_t offset = 0;
  for (const auto& c : chunks) {
    for (std::size_t i = 0; i < c.tokens.size(); ++i) {
      p.ints.push_back(to_int(offset, "block table offset"));
    }
    offset += kv.block_table(c.seq, g).n_blocks();
  }
  p.blocks_at.push_back(static_cast<std::int64_t>(p.ints.size()));
  for (const auto& c : chunks) {
    for (const BlockId b : kv.block_table(c.seq, g).blocks()) p.ints.push_back(b);
  }
  p.ints.resize(static_cast<std::size_t>(p.blocks_at.back() + p.blocks_capacity), kNoBlock);
  pack_shadows(chunks, kv, g, p);
}

// Token ids, positions and logit rows: the first 2 * n_tokens + n_rows ints.
void pack_tokens(std::span<const SequenceChunk> chunks, std::int64_t vocab, bool logit_rows,
                 StepPlan& p) {
  p.tokens_at = 0;
  for (const auto& c : chunks) {
    for (const TokenId id : c.tokens) {
      if (id < 0 || id >= vocab) {
        throw_error<UsageError>("token id {} outside the vocabulary (size {})", id, vocab);
      }
      p.ints.push_back(static_cast<int>(id));
    }
  }
  p.pos_at = static_cast<std::int64_t>(p.ints.size());
  for (const auto& c : chunks) {
    for (std::size_t i = 0; i < c.tokens.size(); ++i) {
      p.ints.push_back(to_int(c.start_pos + static_cast<std::int64_t>(i), "position"));
    }
  }
  p.rows_at = static_cast<std::int64_t>(p.ints.size());
  if (!logit_rows) return;
  std::int64_t t = 0;
  for (const auto& c : chunks) {
    const auto n = static_cast<std::int64_t>(c.tokens.size());
    for (std::int64_t i = c.all_logits ? 0 : n - 1; n > 0 && i < n; ++i) {
      p.ints.push_back(to_int(t + i, "token index"));
    }
    t += n;
  }
}

}  // namespace

bool is_decode_step(std::span<const SequenceChunk> chunks) {
  return !chunks.empty() && std::all_of(chunks.begin(), chunks.end(), [](const SequenceChunk& c) {
    return c.tokens.size() == 1;
  });
}

StepPlan plan_step(std::span<const SequenceChunk> chunks, const KvCacheManager& kv,
                   std::int64_t vocab, std::int64_t max_positions, std::int64_t min_blocks_capacity,
                   bool logit_rows) {
  StepPlan p;
  for (const auto& c : chunks) {
    const auto n = static_cast<std::int64_t>(c.tokens.size());
    const std::int64_t reserved = kv.n_tokens(c.seq);
    if (c.start_pos < 0 || c.start_pos + n > reserved || c.start_pos + n > max_positions) {
      throw_error<UsageError>(
          "CUDA step: sequence {} positions {}..{} outside the {} reserved in the KV cache "
          "(context {})",
          c.seq, c.start_pos, c.start_pos + n - 1, reserved, max_positions);
    }
    p.n_tokens += n;
    if (logit_rows) p.n_rows += c.all_logits ? n : (n > 0 ? 1 : 0);
  }
  if (p.n_tokens > kMaxStepTokens) {
    throw_error<UsageError>(
        "CUDA step: {} tokens in one step; the kernels' grids take at most {} (use a "
        "smaller batch, -b / max_batch_tokens)",
        p.n_tokens, kMaxStepTokens);
  }
  p.blocks_capacity = blocks_capacity(chunks, kv, min_blocks_capacity);
  pack_tokens(chunks, vocab, logit_rows, p);
  for (std::int64_t g = 0; g < kv.n_groups(); ++g) pack_group(chunks, kv, g, p);
  return p;
}

}  // namespace kvscope::cuda
