#include "cli/attention_bench_cpu.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <numeric>
#include <random>
#include <thread>

#include "cpu/attention/paged_attention.h"
#include "cpu/thread_pool.h"

namespace kvscope::cli {

namespace {

using Clock = std::chrono::steady_clock;

void fill_uniform(std::mt19937& rng, std::vector<float>& v) {
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (float& x : v) x = u(rng);
}

}  // namespace

KvCacheManager make_shuffled_bench_cache(const AttentionBenchShape& shape, KvDtype dtype,
                                         std::int64_t context, std::uint32_t seed) {
  const std::int64_t n_blocks = (context + shape.block_size - 1) / shape.block_size;
  KvCacheConfig config;
  config.groups = uniform_layer_groups(1, dtype);
  config.n_kv_heads = shape.n_kv_heads;
  config.head_dim = shape.head_dim;
  config.block_size = shape.block_size;
  config.max_context = context;
  config.n_blocks = n_blocks;
  KvCacheManager kv(config);

  // Filler i takes block i (the free queue starts in id order); freeing the fillers in a
  // shuffled order leaves the queue, and so kBenchSeq's table, in that order.
  std::vector<SeqId> fillers(static_cast<std::size_t>(n_blocks));
  std::iota(fillers.begin(), fillers.end(), kBenchSeq + 1);
  for (const SeqId f : fillers) {
    kv.add_sequence(f);
    kv.grow(f, 1);
  }
  std::mt19937 rng(seed);
  std::shuffle(fillers.begin(), fillers.end(), rng);
  for (const SeqId f : fillers) kv.free_sequence(f);
  kv.add_sequence(kBenchSeq);
  kv.grow(kBenchSeq, context);

  // one token's K and V: [n_kv_heads][head_dim] each
  std::vector<float> k(static_cast<std::size_t>(shape.n_kv_heads * shape.head_dim));
  std::vector<float> v(k.size());
  for (std::int64_t pos = 0; pos < context; ++pos) {
    fill_uniform(rng, k);
    fill_uniform(rng, v);
    kv.bytes().write_token(kBenchSeq, 0, pos, k.data(), v.data());
  }
  return kv;
}

std::int64_t out_of_order_blocks(const BlockTable& table) {
  const auto blocks = table.blocks();
  std::int64_t n = 0;
  for (std::size_t i = 1; i < blocks.size(); ++i) n += blocks[i] != blocks[i - 1] + 1;
  return n;
}

std::vector<float> random_bench_query(const AttentionBenchShape& shape, std::uint32_t seed) {
  std::vector<float> q(static_cast<std::size_t>(shape.n_heads * shape.head_dim));
  std::mt19937 rng(seed);
  fill_uniform(rng, q);
  return q;
}

HostCacheFlusher::HostCacheFlusher(std::int64_t bytes)
    : buffer_(static_cast<std::size_t>(bytes), 1) {}

std::int64_t HostCacheFlusher::default_bytes() {
  constexpr std::int64_t kMin = std::int64_t{64} << 20, kMax = std::int64_t{512} << 20;
  const long llc = sysconf(_SC_LEVEL3_CACHE_SIZE);  // 0 or -1 when unknown
  return std::clamp<std::int64_t>(2 * static_cast<std::int64_t>(std::max(llc, 0L)), kMin, kMax);
}

void HostCacheFlusher::flush(ThreadPool& pool) {
  constexpr std::int64_t kLine = 64;
  const std::int64_t lines = bytes() / kLine;
  std::atomic<std::uint64_t> total{0};
  pool.parallel_for(
      lines,
      [&](std::int64_t begin, std::int64_t end) {
        std::uint64_t sum = 0;
        for (std::int64_t i = begin; i < end; ++i)
          sum += buffer_[static_cast<std::size_t>(i * kLine)];
        total += sum;
      },
      4096);
  sink_ += total.load();
}

std::vector<double> time_cpu_paged_attention(ThreadPool& pool, const KvCacheManager& kv,
                                             const AttentionBenchShape& shape,
                                             std::span<const float> q, int repetitions,
                                             HostCacheFlusher& flusher, std::span<float> out,
                                             AttentionMath math) {
  const AttentionShape attn{shape.n_heads, shape.n_kv_heads, shape.head_dim};
  const std::int64_t pos = kv.n_tokens(kBenchSeq) - 1;
  paged_attention(pool, kv, kBenchSeq, 0, attn, pos, 1, q, out, math);  // warm-up: threads awake
  std::vector<double> us;
  us.reserve(static_cast<std::size_t>(repetitions));
  for (int r = 0; r < repetitions; ++r) {
    flusher.flush(pool);
    const auto start = Clock::now();
    paged_attention(pool, kv, kBenchSeq, 0, attn, pos, 1, q, out, math);
    us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
  }
  return us;
}

}  // namespace kvscope::cli
