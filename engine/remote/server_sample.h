// One scrape of a serving engine's /metrics read into the numbers KVScope watches, whatever
// the engine calls them. Names, by engine (each source's own spelling):
//
//   what              vLLM v0 (vllm/engine/metrics.py)   vLLM v1 (vllm/v1/metrics/loggers.py)
//   llama-server (tools/server README) KV usage 0..1     vllm:gpu_cache_usage_perc
//   vllm:kv_cache_usage_perc (>= 0.9),      llamacpp:kv_cache_usage_ratio
//                                                        vllm:gpu_cache_usage_perc (before) (builds
//                                                        before the unified cache)
//   running           vllm:num_requests_running          the same llamacpp:requests_processing
//   waiting           vllm:num_requests_waiting          the same llamacpp:requests_deferred
//   preemptions       vllm:num_preemptions_total         the same (counter vllm:num_preemptions) -
//   prefix cache      vllm:gpu_prefix_cache_hit_rate     vllm:prefix_cache_queries_total /
//   _hits_total
//                     (a gauge, 0..1)                    (vllm:gpu_prefix_cache_* before 0.9)    -
//   prompt tokens     vllm:prompt_tokens_total           the same llamacpp:prompt_tokens_total
//   generated tokens  vllm:generation_tokens_total       the same llamacpp:tokens_predicted_total
//   TTFT              vllm:time_to_first_token_seconds   the same                               -
//   inter-token       vllm:time_per_output_token_seconds vllm:inter_token_latency_seconds        -
//                                                        (vllm:time_per_output_token_seconds)
//   KV pool           vllm:cache_config_info{num_gpu_blocks, block_size, gpu_memory_utilization}
//   KV tokens         -                                  - llamacpp:kv_cache_tokens
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
