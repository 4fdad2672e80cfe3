// A host-storage KV cache whose test sequence owns shuffled (non-contiguous, out-of-order)
// blocks, written through the CPU reference (KvCacheManager::write_token), and the device
// copy of its pool: the common setup of the KV append and attention tests.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

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
  int length = 40;  // tokens of the test sequence
  int window = 0;   // sliding window of the group (0: full)
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

inline cuda::KvStepTables step_tables(const TestStep& s, std::uint8_t* pool) {
  cuda::KvStepTables t;
  t.pos = s.ints.as<const int>() + s.plan.pos_at;
  t.first = s.ints.as<const int>() + s.plan.first_at[0];
  t.table_start = s.ints.as<const int>() + s.plan.table_start_at[0];
  t.blocks = s.ints.as<const int>() + s.plan.blocks_at[0];
  t.pool = pool;
  return t;
}

}  // namespace kvscope::test
