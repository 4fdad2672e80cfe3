// A host-storage KV cache whose test sequence owns shuffled (non-contiguous, out-of-order)
// blocks, written through the CPU reference (KvCacheManager::write_token), and the device
// copy of its pool: the common setup of the KV append and attention tests.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "backend/kernel_launchers.h"
#include "backend/step_plan.h"
#include "kernel_test_support.h"
#include "kv/kv_cache_manager.h"
#include "run/backend.h"

namespace kvscope::test {

struct KvCase {
  KvDtype k_dtype = KvDtype::F16;
  KvDtype v_dtype = KvDtype::F16;
  int n_layers = 2;
  int n_kv_heads = 2;
  int head_dim = 64;
  int block_size = 16;
  int length = 40;     // tokens of the test sequence
  int window = 0;      // sliding window of the group (0: full)
  int exact_tail = 0;  // blocks of exact tail (kv/exact_tail.h; 0: none), with 16 copies
};

inline constexpr SeqId kTestSeq = 1;

// Grows the test sequence to c.length tokens in uneven steps, interleaved with a filler
// sequence (freed at the end), so its block table is shuffled.
inline KvCacheManager make_shuffled_kv(const KvCase& c) {
  KvCacheConfig config;
  config.groups = uniform_layer_groups(c.n_layers, c.k_dtype, c.window);
  config.groups[0].v_dtype = c.v_dtype;
  config.n_kv_heads = c.n_kv_heads;
  config.head_dim = c.head_dim;
  config.block_size = c.block_size;
  config.max_context = 4096;
  config.n_blocks = 2 * ((c.length + c.block_size - 1) / c.block_size) + 8;
  if (c.exact_tail > 0) {
    config.exact_tail_blocks = c.exact_tail;
    config.exact_tail_shadows = 16;
  }
  KvCacheManager kv(config);
  kv.add_sequence(kTestSeq);
  kv.add_sequence(2);
  std::mt19937 rng(static_cast<std::uint32_t>(c.length * 131 + c.block_size));
  for (std::int64_t have = 0; have < c.length;) {
    const std::int64_t n = std::min<std::int64_t>(c.length - have, 1 + rng() % (2 * c.block_size));
    kv.grow(kTestSeq, n);
    have += n;
    if (kv.can_grow(2, c.block_size) && rng() % 2) kv.grow(2, c.block_size);
  }
  kv.free_sequence(2);
  return kv;
}

// A step of one chunk: the test sequence's tokens [start, start + n) (ids 0).
struct TestStep {
  std::vector<TokenId> ids;
  SequenceChunk chunk;
  cuda::StepPlan plan;
  cuda::DeviceBuffer ints;
};

inline void make_step(const KvCacheManager& kv, std::int64_t start, std::int64_t n, TestStep& s) {
  s.ids.assign(static_cast<std::size_t>(n), 0);
  s.chunk = SequenceChunk{kTestSeq, s.ids, start, false};
  s.plan = cuda::plan_step({&s.chunk, 1}, kv, 1, kv.config().max_context);
  s.ints = to_device(s.plan.ints);
}

// The step's tables of group 0 over the device pool; with `copies` (the device copy of the
// group's exact-tail shadows) also the exact tail, as the backend passes it for `layer`.
inline cuda::KvStepTables step_tables(const TestStep& s, std::uint8_t* pool,
                                      const KvCacheManager* kv = nullptr, std::int64_t layer = 0,
                                      std::uint8_t* copies = nullptr) {
  cuda::KvStepTables t;
  t.pos = s.ints.as<const int>() + s.plan.pos_at;
  t.first = s.ints.as<const int>() + s.plan.first_at[0];
  t.table_start = s.ints.as<const int>() + s.plan.table_start_at[0];
  t.blocks = s.ints.as<const int>() + s.plan.blocks_at[0];
  t.pool = pool;
  if (const ExactTail* tail = kv && copies ? kv->exact_tail(0) : nullptr) {
    t.tail.shadows = s.ints.as<const int>() + s.plan.shadows_at[0];
    t.tail.pool = copies;
    t.tail.layout = cuda::kv_layer_layout(tail->layout(), layer);
    t.tail.tail_blocks = static_cast<int>(tail->tail_blocks());
  }
  return t;
}

// The device copy of group 0's exact-tail shadows as the CPU wrote them (empty without one).
inline cuda::DeviceBuffer device_copies(const KvCacheManager& kv) {
  const ExactTail* tail = kv.exact_tail(0);
  if (tail == nullptr) return {};
  const auto bytes = static_cast<std::size_t>(tail->n_shadows() * tail->layout().block_bytes());
  cuda::DeviceBuffer d = device_zeros<std::uint8_t>(bytes);
  d.upload(tail->shadow_bytes(), bytes);
  return d;
}

}  // namespace kvscope::test
