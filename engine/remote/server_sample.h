// One scrape of a serving engine's /metrics read into the numbers KVScope watches, whatever
// the engine calls them. Names, by engine, each source's own spelling less its prefix (vllm:,
// llamacpp:); vLLM v0 from vllm/engine/metrics.py, v1 from vllm/v1/metrics/loggers.py,
// llama-server from its tools/server README:
//
// clang-format off
// what           vLLM v0                        vLLM v1                      llama-server
// KV usage 0..1  gpu_cache_usage_perc           kv_cache_usage_perc (a)      kv_cache_usage_ratio
// running        num_requests_running           the same                     requests_processing
// waiting        num_requests_waiting           the same                     requests_deferred
// preemptions    num_preemptions_total          the same                     -
// prefix cache   gpu_prefix_cache_hit_rate (b)  prefix_cache_queries_total,  -
//                                               prefix_cache_hits_total (c)
// prompt tokens  prompt_tokens_total            the same                     prompt_tokens_total
// generated      generation_tokens_total        the same                     tokens_predicted_total
// TTFT           time_to_first_token_seconds    the same                     -
// inter-token    time_per_output_token_seconds  inter_token_latency_seconds  -
//                                               (d)
// KV pool        cache_config_info{num_gpu_blocks, block_size, gpu_memory_utilization}
//                                               (v0 and v1)                  -
// KV tokens      -                              -                            kv_cache_tokens
// clang-format on
//
// (a) from 0.9; vllm:gpu_cache_usage_perc in builds before the unified cache.
// (b) a gauge, 0..1.
// (c) vllm:gpu_prefix_cache_queries_total and _hits_total before 0.9.
// (d) or vllm:time_per_output_token_seconds, the older name.
//
// KVScope's own server (engine/serve) answers with the vLLM v1 names and adds kvscope_*
// metrics, of which kvscope_kv_blocks{group,state} gives the pool's blocks. A counter is read under
// its name with and without _total (prometheus_client adds it; an OpenMetrics exporter may not).
// Several label sets (vLLM's engine="0", "1", ... under data parallelism, several models) are added
// up; KV usage is their mean.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "remote/histogram_quantile.h"
#include "remote/prometheus_text.h"

namespace kvscope {

enum class ServerKind { Unknown, VllmV0, VllmV1, LlamaServer, KvScope };
// "vLLM (v0 metrics)", "vLLM (v1 metrics)", "llama-server", "KVScope", "unknown"
std::string_view server_kind_name(ServerKind kind);

struct ServerSample {
  ServerKind kind = ServerKind::Unknown;
  std::string model_name;          // the model_name label, when there is one
  std::optional<double> kv_usage;  // fraction of the KV pool in use, 0..1
  std::optional<double> running;   // requests being decoded
  std::optional<double> waiting;   // requests queued
  // Counters (cumulative since the server started):
  std::optional<double> preemptions;
  std::optional<double> prefix_queries;  // tokens looked up in the prefix cache
  std::optional<double> prefix_hits;     // of those, tokens found
  std::optional<double> prompt_tokens;
  std::optional<double> generation_tokens;
  std::optional<double> prefix_hit_rate;  // vLLM v0's own gauge, 0..1 (v1 has counters)
  // Cumulative histograms in seconds (empty when the server has none):
  std::vector<HistogramBucket> ttft;
  std::vector<HistogramBucket> inter_token;
  // The pool, when the server says it:
  std::optional<double> kv_tokens;               // tokens held in the KV cache
  std::optional<std::int64_t> kv_pool_blocks;    // num_gpu_blocks, or KVScope's blocks
  std::optional<std::int64_t> kv_block_size;     // tokens per block
  std::optional<double> gpu_memory_utilization;  // the server's setting
  // kv_pool_blocks x kv_block_size when both are known.
  std::optional<std::int64_t> kv_pool_tokens() const;
};

// Which engine wrote the dump (by its metric names).
ServerKind detect_server_kind(const MetricDump& dump);

// Reads every number above that the dump has; missing ones stay empty.
ServerSample read_server_sample(const MetricDump& dump);

}  // namespace kvscope
