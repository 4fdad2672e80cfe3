#include "serve/server_metrics.h"

#include <algorithm>

#include <fmt/format.h>

#include "run/engine.h"

namespace kvscope::serve {

namespace {

// vLLM's buckets for time to first token and inter-token latency (seconds).
const std::vector<double> kTtftBuckets = {0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08,
                                          0.1,   0.25,  0.5,  0.75, 1.0,  2.5,  5.0,
                                          7.5,   10.0,  20.0, 40.0, 80.0};
const std::vector<double> kTokenBuckets = {0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3,
                                           0.4,  0.5,   0.75, 1.0,   2.5, 5.0,  7.5, 10.0};
const std::vector<double> kE2eBuckets = {0.3,  0.5,  0.8,  1.0,  1.5,  2.0,  2.5,  5.0,
                                         10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0};

void header(std::string& out, const char* name, const char* type, const char* help) {
  out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
}

void histogram(std::string& out, const char* name, const char* help, const Histogram& h,
               const std::string& labels) {
  header(out, name, "histogram", help);
  std::int64_t cumulative = 0;
  for (std::size_t i = 0; i < h.bounds.size(); ++i) {
    cumulative += h.counts[i];
    out += fmt::format("{}_bucket{{{},le=\"{}\"}} {}\n", name, labels, h.bounds[i], cumulative);
  }
  out += fmt::format("{}_bucket{{{},le=\"+Inf\"}} {}\n", name, labels, h.count);
  out += fmt::format("{}_sum{{{}}} {}\n{}_count{{{}}} {}\n", name, labels, h.sum, name, labels,
                     h.count);
}

// A label value with \ " and newlines escaped, as the text format asks.
std::string label_value(const std::string& v) {
  std::string out;
  for (const char c : v) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

Histogram::Histogram(std::vector<double> upper_bounds)
    : bounds(std::move(upper_bounds)), counts(bounds.size() + 1, 0) {}

void Histogram::observe(double value) {
  const auto it = std::lower_bound(bounds.begin(), bounds.end(), value);
  ++counts[static_cast<std::size_t>(it - bounds.begin())];
  sum += value;
  ++count;
}

EngineGauges read_gauges(const Engine& engine) {
  EngineGauges g;
  const Scheduler& s = engine.scheduler();
  g.running = s.n_running();
  g.waiting = s.n_waiting();
  g.kept_prefixes = s.n_kept();
  g.preemptions = s.stats().preemptions;
  g.evictions = s.stats().evictions;
  g.steps = s.stats().steps;
  const CacheSnapshot snap = engine.snapshot();
  g.kv_usage = snap.n_blocks > 0
                   ? static_cast<double>(snap.n_used) / static_cast<double>(snap.n_blocks)
                   : 0.0;
  g.internal_fragmentation = snap.internal_fragmentation;
  g.contiguous_waste = snap.contiguous.waste_fraction();
  for (const LayerGroupSnapshot& group : snap.groups) {
    g.groups.push_back({group.n_free, group.n_used - group.n_shared, group.n_shared});
  }
  for (const LayerKvSnapshot& layer : snap.layers) g.layer_bytes.push_back(layer.bytes_in_use);
  g.block_size = snap.block_size;
  if (!snap.groups.empty()) g.kv_tokens = snap.groups.front().filled_slots;
  return g;
}

ServerMetrics::ServerMetrics()
    : ttft_(kTtftBuckets), inter_token_(kTokenBuckets), e2e_(kE2eBuckets) {}

void ServerMetrics::request_admitted(std::int64_t prompt_tokens) {
  std::lock_guard lock(mutex_);
  prefix_queries_ += prompt_tokens;
}

void ServerMetrics::first_token(double seconds) {
  std::lock_guard lock(mutex_);
  ttft_.observe(seconds);
}

void ServerMetrics::next_token(double seconds) {
  std::lock_guard lock(mutex_);
  inter_token_.observe(seconds);
}

void ServerMetrics::request_finished(const RequestResult& r, double seconds) {
  std::lock_guard lock(mutex_);
  ++finished_[finished_reason_label(r.reason)];
  // Prompt tokens as vLLM counts them: the request's prompt, whether computed or reused.
  prompt_tokens_ += r.prompt_tokens;
  generation_tokens_ += static_cast<std::int64_t>(r.generated.size());
  prefix_hits_ += r.reused_tokens;
  e2e_.observe(seconds);
}

void ServerMetrics::request_rejected(int status) {
  std::lock_guard lock(mutex_);
  ++rejected_[status];
}

void ServerMetrics::connection_opened() {
  std::lock_guard lock(mutex_);
  ++connections_;
}

void ServerMetrics::connection_closed() {
  std::lock_guard lock(mutex_);
  --connections_;
}

std::int64_t ServerMetrics::connections() const {
  std::lock_guard lock(mutex_);
  return connections_;
}

std::string finished_reason_label(FinishReason reason) {
  switch (reason) {
    case FinishReason::Length:
    case FinishReason::ContextFull:
      return "length";
    case FinishReason::EndOfGeneration:
    case FinishReason::StopString:
      return "stop";
    case FinishReason::Error:
      return "error";
    default:
      return "abort";
  }
}

std::string ServerMetrics::text(const EngineGauges& e, const std::string& model_name) const {
  std::lock_guard lock(mutex_);
  const std::string m = fmt::format("model_name=\"{}\"", label_value(model_name));
  std::string out;
  auto gauge = [&](const char* name, const char* help, auto value) {
    header(out, name, "gauge", help);
    out += fmt::format("{}{{{}}} {}\n", name, m, value);
  };
  auto counter = [&](const char* name, const char* help, std::int64_t value) {
    header(out, name, "counter", help);
    out += fmt::format("{}{{{}}} {}\n", name, m, value);
  };
  gauge("vllm:num_requests_running", "Requests in the running batch.", e.running);
  gauge("vllm:num_requests_waiting", "Requests waiting for blocks or a batch slot.", e.waiting);
  // Unlike vLLM's, kept prefixes count as used here (their blocks are held until evicted).
  gauge("vllm:kv_cache_usage_perc",
        "KV cache usage, 1 = every block in use (kept prefixes included; they give way first).",
        e.kv_usage);
  counter("vllm:prefix_cache_queries_total", "Prompt tokens looked up in the prefix cache.",
          prefix_queries_);
  counter("vllm:prefix_cache_hits_total", "Prompt tokens found in the prefix cache.", prefix_hits_);
  counter("vllm:num_preemptions_total", "Sequences preempted (blocks freed, recomputed).",
          e.preemptions);
  counter("vllm:prompt_tokens_total", "Prompt tokens of finished requests.", prompt_tokens_);
  counter("vllm:generation_tokens_total", "Generated tokens of finished requests.",
          generation_tokens_);
  header(out, "vllm:request_success_total", "counter", "Finished requests by reason.");
  for (const char* reason : {"stop", "length", "abort", "error"}) {
    const auto it = finished_.find(reason);
    out += fmt::format("vllm:request_success_total{{{},finished_reason=\"{}\"}} {}\n", m, reason,
                       it == finished_.end() ? 0 : it->second);
  }
  histogram(out, "vllm:time_to_first_token_seconds", "Time from arrival to the first token.", ttft_,
            m);
  histogram(out, "vllm:inter_token_latency_seconds", "Time between two tokens of a request.",
            inter_token_, m);
  histogram(out, "vllm:e2e_request_latency_seconds", "Time from arrival to the end.", e2e_, m);

  header(out, "kvscope_kv_blocks", "gauge", "KV blocks by layer group and state.");
  for (std::size_t g = 0; g < e.groups.size(); ++g) {
    const EngineGauges::Group& b = e.groups[g];
    for (const auto& [state, n] :
         {std::pair{"free", b.free}, {"used", b.used}, {"shared", b.shared}}) {
      out += fmt::format("kvscope_kv_blocks{{group=\"{}\",state=\"{}\"}} {}\n", g, state, n);
    }
  }
  header(out, "kvscope_kv_bytes", "gauge", "KV bytes in use per layer.");
  for (std::size_t l = 0; l < e.layer_bytes.size(); ++l) {
    out += fmt::format("kvscope_kv_bytes{{layer=\"{}\"}} {}\n", l, e.layer_bytes[l]);
  }
  // With these a watcher turns the pool's blocks into tokens and compares them with a plan.
  gauge("kvscope_kv_block_size_tokens", "Tokens per KV block.", e.block_size);
  gauge("kvscope_kv_tokens", "Tokens held in the KV cache (layer group 0; shared blocks once).",
        e.kv_tokens);
  gauge("kvscope_kv_internal_fragmentation", "Empty slots of used blocks / their slots.",
        e.internal_fragmentation);
  gauge("kvscope_kv_contiguous_waste", "What reserving each sequence's max context would waste.",
        e.contiguous_waste);
  gauge("kvscope_kept_prefixes", "Ended requests whose cache is kept for prefix sharing.",
        e.kept_prefixes);
  counter("kvscope_prefix_evictions_total", "Kept prefixes released to make room.", e.evictions);
  counter("kvscope_engine_steps_total", "Batched forward steps.", e.steps);
  gauge("kvscope_http_connections", "HTTP requests being served now.", connections_);
  header(out, "kvscope_api_rejected_total", "counter", "Requests answered with an error status.");
  for (const auto& [status, n] : rejected_) {
    out += fmt::format("kvscope_api_rejected_total{{status=\"{}\"}} {}\n", status, n);
  }
  return out;
}

}  // namespace kvscope::serve
