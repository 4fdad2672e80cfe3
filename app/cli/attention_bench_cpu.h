// The host side of `kvscope-cli bench-attention`: the paged KV cache every backend measures
// (one layer, one sequence, its block table a seeded random permutation, K and V seeded
// random values written by the engine's own KvCacheManager::write_token), and the CPU
// measurement itself: kvscope::paged_attention timed call by call with the last-level cache
// flushed in between, so every call reads its K and V from DRAM as a decode step does
// (between two attention calls of one layer the other layers' weights pass through the cache).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "cpu/attention/paged_attention.h"
#include "kv/format/kv_format.h"
#include "kv/kv_cache_manager.h"
#include "kv/kv_ids.h"

namespace kvscope {
class ThreadPool;
}

namespace kvscope::cli {

// The attention layer measured; the defaults are one layer of Llama-3-8B.
struct AttentionBenchShape {
  std::int64_t n_heads = 32;
  std::int64_t n_kv_heads = 8;
  std::int64_t head_dim = 128;
  std::int64_t block_size = 16;
};

// The sequence the bench cache holds.
inline constexpr SeqId kBenchSeq = 0;

// A host-storage KvCacheManager of one layer group holding one layer (layer 0), K and V both
// `dtype`, with exactly ceil(context / block_size) blocks, all owned by kBenchSeq in the
// order of a seeded random permutation: every block is first taken by its own filler
// sequence, the fillers are freed in shuffled order (the free queue is FIFO), and then
// kBenchSeq grows to `context` tokens. K and V of positions [0, context) hold uniform
// [-1, 1) values from `seed`.
KvCacheManager make_shuffled_bench_cache(const AttentionBenchShape& shape, KvDtype dtype,
                                         std::int64_t context, std::uint32_t seed);

// Neighbouring entries of a block table that are not consecutive block ids (0: in order).
std::int64_t out_of_order_blocks(const BlockTable& table);

// The decode query: [n_heads][head_dim] uniform [-1, 1) values from `seed`.
std::vector<float> random_bench_query(const AttentionBenchShape& shape, std::uint32_t seed);

// Reads a buffer of `bytes` (every cache line) on all the pool's threads, evicting what the
// caches held. Default size: twice the last-level cache the C library reports, within
// [64 MiB, 512 MiB].
class HostCacheFlusher {
 public:
  explicit HostCacheFlusher(std::int64_t bytes = default_bytes());
  void flush(ThreadPool& pool);
  std::int64_t bytes() const { return static_cast<std::int64_t>(buffer_.size()); }
  static std::int64_t default_bytes();

 private:
  std::vector<std::uint8_t> buffer_;
  std::uint64_t sink_ = 0;  // keeps the reads from being optimised away
};

// Decode attention of kBenchSeq's last position (one query token) over layer 0 of `kv`:
// one warm-up call, then `repetitions` calls, each after a cache flush; returns each call's
// microseconds, with the given arithmetic. out: [n_heads][head_dim], the last call's result.
std::vector<double> time_cpu_paged_attention(ThreadPool& pool, const KvCacheManager& kv,
                                             const AttentionBenchShape& shape,
                                             std::span<const float> q, int repetitions,
                                             HostCacheFlusher& flusher, std::span<float> out,
                                             AttentionMath math);

}  // namespace kvscope::cli
