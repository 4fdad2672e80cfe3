#include "remote/server_sample.h"

#include <charconv>
#include <cmath>
#include <initializer_list>

namespace kvscope {

std::string_view server_kind_name(ServerKind kind) {
  switch (kind) {
    case ServerKind::VllmV0:
      return "vLLM (v0 metrics)";
    case ServerKind::VllmV1:
      return "vLLM (v1 metrics)";
    case ServerKind::LlamaServer:
      return "llama-server";
    case ServerKind::KvScope:
      return "KVScope";
    case ServerKind::Unknown:
      break;
  }
  return "unknown";
}

std::optional<std::int64_t> ServerSample::kv_pool_tokens() const {
  if (!kv_pool_blocks || !kv_block_size) return std::nullopt;
  return *kv_pool_blocks * *kv_block_size;
}

namespace {

using Names = std::initializer_list<std::string_view>;

// Every sample called `name`, over all families and label sets.
template <typename F>
void for_each_sample(const MetricDump& dump, std::string_view name, F&& f) {
  for (const MetricFamily& family : dump.families) {
    for (const MetricSample& s : family.samples) {
      if (s.name == name && !std::isnan(s.value)) f(s);
    }
  }
}

// The sum over label sets of the first name present.
std::optional<double> sum_of(const MetricDump& dump, Names names) {
  for (std::string_view name : names) {
    std::optional<double> sum;
    for_each_sample(dump, name, [&](const MetricSample& s) { sum = sum.value_or(0.0) + s.value; });
    if (sum) return sum;
  }
  return std::nullopt;
}

// The mean over label sets of the first name present.
std::optional<double> mean_of(const MetricDump& dump, Names names) {
  for (std::string_view name : names) {
    double sum = 0.0;
    int n = 0;
    for_each_sample(dump, name, [&](const MetricSample& s) {
      sum += s.value;
      ++n;
    });
    if (n > 0) return sum / n;
  }
  return std::nullopt;
}

// A counter under its name with _total (prometheus_client) or without.
std::optional<double> counter(const MetricDump& dump, std::string_view base) {
  const std::string total = std::string(base) + "_total";
  return sum_of(dump, {total, base});
}

std::vector<HistogramBucket> histogram(const MetricDump& dump, Names names) {
  for (std::string_view name : names) {
    const MetricFamily* f = dump.find(name);
    if (f == nullptr || f->type != MetricType::Histogram) continue;
    std::vector<HistogramBucket> buckets = merged_buckets(*f);
    if (!buckets.empty()) return buckets;
  }
  return {};
}

bool has_any(const MetricDump& dump, Names names) {
  for (std::string_view name : names) {
    if (dump.find(name) != nullptr) return true;
  }
  return false;
}

std::optional<double> number(const std::string* text) {
  if (text == nullptr) return std::nullopt;
  double v = 0.0;
  const auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), v);
  if (ec != std::errc() || end != text->data() + text->size() || !std::isfinite(v)) {
    return std::nullopt;
  }
  return v;
}

// vllm:cache_config_info (an Info metric: a gauge of 1 whose labels carry the settings).
void read_cache_config(const MetricDump& dump, ServerSample& out) {
  const MetricFamily* f = dump.find("vllm:cache_config_info");
  if (f == nullptr || f->samples.empty()) return;
  const MetricSample& s = f->samples.front();
  // A hostile label must not overflow the integer casts: no pool has 2^40 blocks.
  if (auto blocks = number(s.label("num_gpu_blocks")); blocks && *blocks > 0 && *blocks < 0x1p40) {
    out.kv_pool_blocks = static_cast<std::int64_t>(*blocks);
  }
  if (auto size = number(s.label("block_size")); size && *size > 0 && *size < 0x1p20) {
    out.kv_block_size = static_cast<std::int64_t>(*size);
  }
  out.gpu_memory_utilization = number(s.label("gpu_memory_utilization"));
}

// KVScope's server: kvscope_kv_blocks{group, state} (free, used, shared) partitions each
// layer group's pool; the first group's sum is the pool, kvscope_kv_block_size_tokens its
// block size and kvscope_kv_tokens the tokens it holds.
void read_kvscope_pool(const MetricDump& dump, ServerSample& out) {
  const MetricFamily* f = dump.find("kvscope_kv_blocks");
  if (f == nullptr) return;
  double blocks = 0.0;
  for (const MetricSample& s : f->samples) {
    const std::string* group = s.label("group");
    if (group != nullptr && *group == "0" && std::isfinite(s.value)) blocks += s.value;
  }
  if (blocks > 0 && blocks < 0x1p40) out.kv_pool_blocks = static_cast<std::int64_t>(blocks);
  if (const MetricFamily* size = dump.find("kvscope_kv_block_size_tokens");
      size != nullptr && !size->samples.empty()) {
    const double v = size->samples.front().value;
    if (v >= 1 && v < 0x1p20) out.kv_block_size = static_cast<std::int64_t>(v);
  }
  if (const MetricFamily* tokens = dump.find("kvscope_kv_tokens");
      tokens != nullptr && !tokens->samples.empty()) {
    const double v = tokens->samples.front().value;
    if (v >= 0 && v < 0x1p50) out.kv_tokens = v;
  }
}

std::string model_label(const MetricDump& dump) {
  for (const MetricFamily& f : dump.families) {
    for (const MetricSample& s : f.samples) {
      if (const std::string* m = s.label("model_name")) return *m;
    }
  }
  return {};
}

}  // namespace

ServerKind detect_server_kind(const MetricDump& dump) {
  bool vllm = false;
  bool llama = false;
  for (const MetricFamily& f : dump.families) {
    if (f.name.starts_with("kvscope_") || f.name.starts_with("kvscope:"))
      return ServerKind::KvScope;
    llama = llama || f.name.starts_with("llamacpp:");
    vllm = vllm || f.name.starts_with("vllm:");
  }
  if (llama) return ServerKind::LlamaServer;
  if (!vllm) return ServerKind::Unknown;
  // v1 only: the renamed gauge, prefix-cache counters, inter-token histogram, engine label.
  if (has_any(dump, {"vllm:kv_cache_usage_perc", "vllm:prefix_cache_queries_total",
                     "vllm:gpu_prefix_cache_queries_total", "vllm:inter_token_latency_seconds",
                     "vllm:iteration_tokens_total"})) {
    return ServerKind::VllmV1;
  }
  const MetricFamily* running = dump.find("vllm:num_requests_running");
  if (running != nullptr && !running->samples.empty() &&
      running->samples.front().label("engine") != nullptr) {
    return ServerKind::VllmV1;
  }
  return ServerKind::VllmV0;
}

ServerSample read_server_sample(const MetricDump& dump) {
  ServerSample s;
  s.kind = detect_server_kind(dump);
  s.model_name = model_label(dump);
  s.kv_usage = mean_of(dump, {"vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc",
                              "llamacpp:kv_cache_usage_ratio"});
  s.running = sum_of(dump, {"vllm:num_requests_running", "llamacpp:requests_processing"});
  s.waiting = sum_of(dump, {"vllm:num_requests_waiting", "llamacpp:requests_deferred"});
  s.preemptions = counter(dump, "vllm:num_preemptions");
  s.prefix_queries = counter(dump, "vllm:prefix_cache_queries");
  s.prefix_hits = counter(dump, "vllm:prefix_cache_hits");
  if (!s.prefix_queries) {
    s.prefix_queries = counter(dump, "vllm:gpu_prefix_cache_queries");
    s.prefix_hits = counter(dump, "vllm:gpu_prefix_cache_hits");
  }
  s.prefix_hit_rate = mean_of(dump, {"vllm:gpu_prefix_cache_hit_rate"});
  s.prompt_tokens = counter(dump, "vllm:prompt_tokens");
  if (!s.prompt_tokens) s.prompt_tokens = counter(dump, "llamacpp:prompt_tokens");
  s.generation_tokens = counter(dump, "vllm:generation_tokens");
  if (!s.generation_tokens) s.generation_tokens = counter(dump, "llamacpp:tokens_predicted");
  s.ttft = histogram(dump, {"vllm:time_to_first_token_seconds"});
  s.inter_token =
      histogram(dump, {"vllm:inter_token_latency_seconds", "vllm:time_per_output_token_seconds"});
  s.kv_tokens = sum_of(dump, {"llamacpp:kv_cache_tokens"});
  read_cache_config(dump, s);
  read_kvscope_pool(dump, s);
  return s;
}

}  // namespace kvscope
