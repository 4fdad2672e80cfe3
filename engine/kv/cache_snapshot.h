// The plain-data picture of the KV cache that the live panel charts: value types only (no
// pointers into the manager), cheap to copy to the UI thread. Built by
// KvCacheManager::snapshot().
//
// Definitions used throughout:
//   filled slot   a token slot reserved by grow() (it is written right after);
//   allocated     slots of used blocks (n_used * block_size), each physical block once;
//   internal fragmentation = (allocated - filled) / allocated (0 with nothing allocated);
//   shared savings = sum over used blocks of (refcount - 1) * block_bytes, the bytes that
//                 unshared copies of the shared blocks would add;
//   exact copies  the fp16 copies of a quantized group's newest blocks (kv/exact_tail.h):
//                 part of the pool's bytes, and of the used bytes while a block holds one.
#pragma once

#include <cstdint>
#include <vector>

#include "kv/contiguous_policy.h"
#include "kv/format/kv_format.h"
#include "kv/format/quant_error.h"
#include "kv/kv_ids.h"

namespace kvscope {

struct BlockInfo {
  BlockId id = kNoBlock;
  SeqId owner = -1;           // lowest live sequence id holding the block; -1 when free
  std::int32_t refcount = 0;  // sequences holding it (0 = free)
  std::int32_t filled_slots = 0;
  bool exact_copy = false;  // it has an fp16 copy (exact tail)

  bool is_free() const { return refcount == 0; }
  bool is_shared() const { return refcount > 1; }
};

struct LayerGroupSnapshot {
  std::vector<std::int64_t> layers;  // model layer indices
  KvDtype k_dtype = KvDtype::F16;
  KvDtype v_dtype = KvDtype::F16;
  std::int64_t window = 0;  // 0 = full attention
  std::int64_t block_bytes = 0;
  std::int64_t n_blocks = 0;
  std::int64_t n_used = 0;
  std::int64_t n_free = 0;
  std::int64_t n_shared = 0;  // used blocks with refcount > 1
  std::int64_t allocated_slots = 0;
  std::int64_t filled_slots = 0;
  double internal_fragmentation = 0.0;
  std::int64_t shared_savings_bytes = 0;
  std::int64_t exact_copies = 0;       // fp16 copies the group has (0: no exact tail)
  std::int64_t exact_copies_used = 0;  // held by blocks now
  std::int64_t exact_copy_bytes = 0;   // bytes of one
  ContiguousCost contiguous;           // the reference policy, this group only
  std::vector<BlockInfo> blocks;       // [n_blocks], blocks[i].id == i
};

struct LayerKvSnapshot {
  std::int64_t layer = 0;
  std::int64_t group = 0;
  std::int64_t bytes_in_use = 0;  // this layer's share of the group's used blocks
  QuantErrorSums k;               // measured quantization error of K and V written so far
  QuantErrorSums v;
};

struct SequenceSnapshot {
  SeqId id = 0;
  std::int64_t n_tokens = 0;
  bool preempted = false;
  std::int64_t preempted_length = 0;  // tokens to recompute on resume
};

struct CacheSnapshot {
  std::int64_t n_kv_heads = 0;
  std::int64_t head_dim = 0;
  std::int64_t block_size = 0;
  std::int64_t max_context = 0;
  std::vector<LayerGroupSnapshot> groups;
  std::vector<LayerKvSnapshot> layers;      // [n_layers], layers[i].layer == i
  std::vector<SequenceSnapshot> sequences;  // ascending id

  // Totals over all groups (sums of the group fields; fragmentation recomputed).
  std::int64_t n_blocks = 0;
  std::int64_t n_used = 0;
  std::int64_t n_free = 0;
  std::int64_t n_shared = 0;    // used blocks with refcount > 1, all groups
  std::int64_t pool_bytes = 0;  // blocks and exact copies
  std::int64_t used_bytes = 0;  // used blocks and the copies they hold
  std::int64_t exact_copies = 0;
  std::int64_t exact_copies_used = 0;
  std::int64_t allocated_slots = 0;
  std::int64_t filled_slots = 0;
  double internal_fragmentation = 0.0;
  std::int64_t shared_savings_bytes = 0;
  ContiguousCost contiguous;
};

// Fills a group's counters and fragmentation from its `blocks` and `block_bytes`.
void summarize_group(LayerGroupSnapshot& group, std::int64_t block_size);

// Fills the snapshot totals from its groups (call after summarize_group on each).
void summarize_totals(CacheSnapshot& snapshot);

}  // namespace kvscope
