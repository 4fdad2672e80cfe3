// Google Benchmark timings of the CPU attention (cpu_attention.h), so a regression shows up in
// numbers: one decoded token of SmolLM2's shape (9 query heads, 3 KV heads, head_dim 64) at
// 512 and 4096 positions, every KV dtype, float math and llama.cpp's order, 1 and 2 threads.
// The cache fits in the last-level cache here; `kvscope-cli bench-attention` measures the
// same call with the cache flushed, as a decode step sees it.
// Run: build/bin/kvscope_cpu_benchmarks --benchmark_filter=Attention
#include <benchmark/benchmark.h>

#include <random>
#include <string>
#include <vector>

#include "cpu/attention/paged_attention.h"
#include "cpu/thread_pool.h"
#include "kv/kv_cache_manager.h"

namespace kvscope {
namespace {

constexpr SeqId kSeq = 1;
constexpr std::int64_t kHeads = 9, kKvHeads = 3, kHeadDim = 64;

KvCacheManager filled_cache(KvDtype dtype, std::int64_t context) {
  KvCacheConfig cfg;
  cfg.groups = uniform_layer_groups(1, dtype, 0);
  cfg.n_kv_heads = kKvHeads;
  cfg.head_dim = kHeadDim;
  cfg.block_size = 16;
  cfg.max_context = context;
  cfg.n_blocks = context / 16 + 1;
  KvCacheManager kv(cfg);
  kv.add_sequence(kSeq);
  kv.grow(kSeq, context);
  std::mt19937 rng(7);
  std::normal_distribution<float> d(0.0f, 1.0f);
  std::vector<float> k(kKvHeads * kHeadDim), v(k.size());
  for (std::int64_t p = 0; p < context; ++p) {
    for (std::size_t i = 0; i < k.size(); ++i) k[i] = d(rng), v[i] = d(rng);
    kv.bytes().write_token(kSeq, 0, p, k.data(), v.data());
  }
  return kv;
}

void BM_DecodeAttention(benchmark::State& state, KvDtype dtype, std::int64_t context,
                        AttentionMath math, int threads) {
  const KvCacheManager kv = filled_cache(dtype, context);
  std::vector<float> q(kHeads * kHeadDim, 0.1f), out(q.size());
  ThreadPool pool(threads);
  for (auto _ : state) {
    paged_attention(pool, kv, kSeq, 0, {kHeads, kKvHeads, kHeadDim}, context - 1, 1, q, out, math);
    benchmark::DoNotOptimize(out.data());
  }
  state.counters["keys/s"] = benchmark::Counter(static_cast<double>(context),
                                                benchmark::Counter::kIsIterationInvariantRate);
}

int register_all() {
  for (const KvDtype dtype : {KvDtype::F16, KvDtype::Int8, KvDtype::Int4}) {
    for (const std::int64_t context : {512, 4096}) {
      for (const AttentionMath math : {AttentionMath::Float, AttentionMath::GgmlOrder}) {
        if (math == AttentionMath::GgmlOrder && dtype != KvDtype::F16) continue;  // same path
        for (const int threads : {1, 2}) {
          const std::string name =
              std::string("DecodeAttention/") + std::string(kv_dtype_name(dtype)) + "/ctx" +
              std::to_string(context) + (math == AttentionMath::Float ? "/float" : "/ggml-order") +
              "/t" + std::to_string(threads);
          benchmark::RegisterBenchmark(name.c_str(), BM_DecodeAttention, dtype, context, math,
                                       threads);
        }
      }
    }
  }
  return 0;
}

const int registered = register_all();

}  // namespace
}  // namespace kvscope
