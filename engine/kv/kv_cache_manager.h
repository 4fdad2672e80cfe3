// The facade the scheduler and the decoder use: sequences grow, fork, are freed or
// preempted, and every token position maps to a (block, slot) whose bytes the decoder
// reads and writes. It coordinates, and owns:
//   per layer group  a BlockPool (refcounts, free queue), a KvStorage (host bytes,
//                    optional), a SlidingWindow (which positions a query sees, which
//                    blocks can go), the group's KvBlockLayout, and for a quantized group
//                    with the exact tail on, its ExactTail (fp16 copies of the newest
//                    blocks, exact_tail.h);
//   per sequence     one BlockTable per group, and its preempted state;
// The one rule it keeps itself is copy-on-write of a shared partial tail (below). The bytes
// are reached through a view, bytes() (kv_bytes.h: what the backends read and write); what
// the panel watches (quantization error per layer, snapshots) is a KvCacheObserver
// (kv_cache_observer.h) the manager reports measured errors to.
//
// Reading a key in the decoder (layer -> group g, index li inside the group; the whole loop,
// values and the exact tail included, is cpu/attention/reference_attention.cpp):
//   const KvBlockLayout& L = m.layout(g);
//   const BlockTable& t = m.block_table(seq, g);
//   for (pos = m.first_visible_position(g, query_pos); pos <= query_pos; ++pos) {
//     const std::uint8_t* base = m.bytes().block_data(g, t.block(pos / L.block_size));
//     const std::int64_t slot = pos % L.block_size;
//     const std::uint8_t* kd = L.data(base, KvSide::K, li, head, slot);
//     const std::uint16_t* ks = L.scales(base, KvSide::K, li, head, slot);
//     float score;
//     if (L.k_dtype == KvDtype::Int4) {  // offset int4 (kv_format.h)
//       // once per block: kv_k4_query_terms(q, L.k_offsets(base, li, head), L.head_dim, terms)
//       score = kv_k4_dot(q, terms, kd, ks, L.head_dim);
//     } else {
//       score = kv_dot(L.k_dtype, q, kd, ks, L.head_dim);
//     }
//   }
// Values have no offsets: kv_axpy(L.v_dtype, ...) reads them in every format.
// Writing: grow(seq, n) first (it reserves positions n_tokens .. n_tokens + n - 1 and makes
// their blocks exclusively owned), then bytes().write_token() (kv_bytes.h) into the slots in
// position order: with Int4 K a block's slot 0 sets the offsets its other keys are stored
// against.
//
// Copy-on-write: a fork shares all blocks. The first grow of either sequence that writes
// into a shared, partially filled tail copies the tail to a fresh block and drops its
// reference; full shared blocks are never written and stay shared.
//
// Not thread-safe: one thread (the scheduler's) calls everything.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <vector>

#include "kv/block_pool.h"
#include "kv/block_table.h"
#include "kv/exact_tail.h"
#include "kv/format/kv_block_layout.h"
#include "kv/kv_bytes.h"
#include "kv/kv_cache_config.h"
#include "kv/kv_ids.h"
#include "kv/kv_storage.h"
#include "kv/sliding_window.h"

namespace kvscope {

// A block copy the manager decided on (copy-on-write). With host storage it has been done
// on the host already; a device backend must do it in device memory before the next step,
// and copy the exact tail's fp16 copy too when both blocks have one (exact_tail.h).
struct BlockCopy {
  std::int64_t group = 0;
  BlockId src = kNoBlock;
  BlockId dst = kNoBlock;
  std::int32_t src_shadow = -1;  // the blocks' exact-tail shadow indices, or -1
  std::int32_t dst_shadow = -1;
};

struct KvSlot {
  BlockId block = kNoBlock;
  std::int64_t slot = 0;  // 0 .. block_size - 1
};

struct KvUsage {
  std::int64_t n_blocks = 0;
  std::int64_t n_used = 0;
  std::int64_t n_free = 0;
  double used_fraction() const {
    return n_blocks > 0 ? static_cast<double>(n_used) / static_cast<double>(n_blocks) : 0.0;
  }
};

class KvCacheObserver;

class KvCacheManager {
 public:
  // Validates the config (UsageError) and sizes the pools (CapacityError if the budget
  // holds no block).
  explicit KvCacheManager(KvCacheConfig config);

  // --- shape
  const KvCacheConfig& config() const { return config_; }
  std::int64_t n_groups() const { return static_cast<std::int64_t>(groups_.size()); }
  std::int64_t n_layers() const { return static_cast<std::int64_t>(layer_group_.size()); }
  const KvBlockLayout& layout(std::int64_t group) const { return group_at(group).layout; }
  std::int64_t group_of_layer(std::int64_t layer) const;
  std::int64_t layer_in_group(std::int64_t layer) const;  // index inside its group's blocks
  // The oldest key position a query at query_pos sees in a group (0 for full attention).
  std::int64_t first_visible_position(std::int64_t group, std::int64_t query_pos) const;

  // --- sequences (UsageError for unknown ids, or the wrong state, naming the id)
  void add_sequence(SeqId seq);
  bool has_sequence(SeqId seq) const { return seqs_.contains(seq); }
  std::vector<SeqId> sequence_ids() const;  // ascending
  std::int64_t n_tokens(SeqId seq) const;   // 0 while preempted
  bool is_preempted(SeqId seq) const;
  std::int64_t preempted_length(SeqId seq) const;

  // Blocks grow(seq, n) would take from a group's free queue (new blocks plus a
  // copy-on-write tail; blocks the window releases are not subtracted).
  std::int64_t blocks_needed(SeqId seq, std::int64_t n, std::int64_t group) const;
  // Whether grow(seq, n) would succeed: within max_context and enough free blocks in every
  // group. A preempted sequence is asked as if resumed (empty).
  bool can_grow(SeqId seq, std::int64_t n) const;
  // Reserves positions n_tokens .. n_tokens + n - 1 in every group: releases blocks a
  // sliding window no longer needs, copies a shared partial tail, appends blocks. All or
  // nothing: CapacityError (naming sequence, group and block counts, or the context
  // length) before anything changes. Copies made are appended to *copies when given.
  void grow(SeqId seq, std::int64_t n, std::vector<BlockCopy>* copies = nullptr);
  // child (new id) shares every block of parent, refcount + 1 each.
  void fork(SeqId parent, SeqId child);
  // Keeps the first n tokens of a running sequence and releases the blocks past them
  // (fork + truncate starts a sequence from another's prefix; the partly kept tail stays
  // shared until the next grow copies it). UsageError past n_tokens, or when a sliding
  // window has dropped a block the kept tokens would still need.
  void truncate(SeqId seq, std::int64_t n);
  // Whether truncate(seq, n) would succeed.
  bool can_truncate(SeqId seq, std::int64_t n) const;
  // Releases the sequence's blocks and forgets it.
  void free_sequence(SeqId seq);
  // Releases the sequence's blocks but keeps it, remembering its length for recompute.
  void preempt(SeqId seq);
  // Makes a preempted sequence growable again (empty) and returns the length it had.
  std::int64_t resume(SeqId seq);

  // --- addressing
  const BlockTable& block_table(SeqId seq, std::int64_t group) const;
  // (block, slot) of a reserved position. UsageError past n_tokens or outside the window.
  KvSlot slot(SeqId seq, std::int64_t group, std::int64_t pos) const;
  // The group's exact tail (which blocks have an fp16 copy), or nullptr when it keeps none
  // (exact_tail.h says how a query reads it).
  const ExactTail* exact_tail(std::int64_t group) const {
    const auto& tail = group_at(group).tail;
    return tail ? &*tail : nullptr;
  }
  // The blocks' bytes (kv_bytes.h).
  KvBytes bytes() const { return KvBytes(*this); }
  KvBytesWriter bytes() { return KvBytesWriter(*this); }

  // --- usage
  const BlockPool& pool(std::int64_t group) const { return group_at(group).pool; }
  KvUsage usage() const;
  KvUsage usage(std::int64_t group) const;

  // --- the observer measured errors go to (nullptr: none); it must outlive the manager's use
  void set_observer(KvCacheObserver* observer) { observer_ = observer; }
  KvCacheObserver* observer() const { return observer_; }

 private:
  friend class KvBytes;
  friend class KvBytesWriter;
  struct Group {
    KvBlockLayout layout;
    BlockPool pool;
    SlidingWindow window;
    std::optional<KvStorage> storage;  // absent when a device backend holds the bytes
    std::optional<ExactTail> tail;     // quantized groups with the exact tail on
  };
  struct Sequence {
    std::vector<BlockTable> tables;  // [n_groups]
    bool preempted = false;
    std::int64_t preempted_length = 0;
  };

  const Group& group_at(std::int64_t group) const;
  Group& group_at(std::int64_t group);
  const Sequence& seq_at(SeqId seq) const;
  Sequence& seq_at(SeqId seq);
  Sequence& running_seq_at(SeqId seq, const char* operation);
  std::int64_t check_layer(std::int64_t layer) const;
  struct Shortfall {
    std::int64_t group = -1;  // -1: the context length
    std::int64_t needed = 0;
    std::int64_t available = 0;
  };
  std::int64_t needed_blocks(const BlockTable& t, std::int64_t group, std::int64_t n) const;
  std::optional<Shortfall> shortfall(const Sequence& s, std::int64_t n) const;
  void grow_group(BlockTable& t, std::int64_t group, std::int64_t n,
                  std::vector<BlockCopy>* copies);
  void release_all(Sequence& s);
  // One holder fewer of a group's block; a freed block loses its exact-tail copy.
  void release_block(Group& g, BlockId id);

  KvCacheConfig config_;
  std::vector<Group> groups_;
  std::vector<std::int64_t> layer_group_;     // [n_layers] group of each model layer
  std::vector<std::int64_t> layer_in_group_;  // [n_layers] index inside that group
  std::map<SeqId, Sequence> seqs_;            // ordered: sequence_ids() ascend
  KvCacheObserver* observer_ = nullptr;
};

}  // namespace kvscope
