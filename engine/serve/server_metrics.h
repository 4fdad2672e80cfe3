// What GET /metrics reports, in Prometheus' text format (version 0.0.4). vLLM's names where
// vLLM has the metric (dashboards and engine/remote read them alike), KVScope's own for the
// paged cache (kvscope_*). Counters and histograms are kept here, updated from the engine
// thread's callbacks and the HTTP threads under one mutex; the engine's gauges are read on
// the engine thread at scrape time (EngineGauges) and passed in.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "run/request.h"

namespace kvscope {
class Engine;
}

namespace kvscope::serve {

// A Prometheus histogram: counts[i] = observations <= bounds[i] (cumulative when written).
struct Histogram {
  std::vector<double> bounds;        // ascending upper bounds, +Inf implied
  std::vector<std::int64_t> counts;  // [bounds.size() + 1], not cumulative
  double sum = 0.0;
  std::int64_t count = 0;

  explicit Histogram(std::vector<double> upper_bounds);
  void observe(double value);
};

// The engine's side, read on its thread.
struct EngineGauges {
  struct Group {
    std::int64_t free = 0, used = 0, shared = 0;
  };
  std::int64_t running = 0;
  std::int64_t waiting = 0;
  std::int64_t kept_prefixes = 0;
  std::int64_t preemptions = 0;
  std::int64_t evictions = 0;
  std::int64_t steps = 0;
  double kv_usage = 0.0;  // used blocks / all blocks, 0..1
  double internal_fragmentation = 0.0;
  double contiguous_waste = 0.0;  // what reserving max context per sequence would waste
  std::vector<Group> groups;
  std::vector<std::int64_t> layer_bytes;  // [n_layers] KV bytes in use
  std::int64_t block_size = 0;            // tokens per block
  std::int64_t kv_tokens = 0;  // tokens held in the first group's blocks (a shared block once)
};
EngineGauges read_gauges(const Engine& engine);

class ServerMetrics {
 public:
  ServerMetrics();

  void request_admitted(std::int64_t prompt_tokens);  // prompt tokens queried for a prefix
  void first_token(double seconds_since_arrival);
  void next_token(double seconds_since_previous);
  void request_finished(const RequestResult& result, double seconds_since_arrival);
  void request_rejected(int status);
  void connection_opened();
  void connection_closed();
  std::int64_t connections() const;

  // The whole text, counters and histograms with the engine's gauges.
  std::string text(const EngineGauges& engine, const std::string& model_name) const;

 private:
  mutable std::mutex mutex_;
  std::map<std::string, std::int64_t> finished_;  // finished_reason -> count
  std::map<int, std::int64_t> rejected_;          // HTTP status -> count
  std::int64_t prompt_tokens_ = 0;
  std::int64_t generation_tokens_ = 0;
  std::int64_t prefix_queries_ = 0;
  std::int64_t prefix_hits_ = 0;
  std::int64_t connections_ = 0;
  Histogram ttft_;
  Histogram inter_token_;
  Histogram e2e_;
};

// vLLM's finished_reason label: stop, length or abort.
std::string finished_reason_label(FinishReason reason);

}  // namespace kvscope::serve
