// WatchSeries: the scrapes of one server over time, turned into the points KVScope charts
// and prints. Gauges are shown as read; counters become rates and histograms percentiles:
//
//   tokens/s       (generation_tokens(t) - generation_tokens(t_prev)) / (t - t_prev), the
//                  same for prompt tokens; a counter that went down (the server restarted)
//                  counts from 0: its new value / (t - t_prev), as PromQL's rate() does
//   preemptions/s  likewise from the preemption counter
//   prefix hits    (hits(t) - hits(t - window)) / (queries(t) - queries(t - window)): the
//                  share of looked-up prompt tokens found in the cache over the window
//                  (vLLM v0 reports this share itself: its gauge is shown instead)
//   TTFT, ITL      histogram_quantile over the observations of the window: the buckets at
//                  t minus those at the oldest scrape inside t - window (as
//                  histogram_quantile(q, rate(x_bucket[window])) does)
//
// A value the server does not report, or that the window cannot tell (no earlier scrape,
// no queries, no new requests), is left empty rather than shown as 0.
#pragma once

#include <cstddef>
#include <deque>
#include <optional>

#include "remote/server_sample.h"

namespace kvscope {

struct WatchPoint {
  double seconds = 0.0;  // since the series' first scrape
  std::optional<double> kv_usage_pct;
  std::optional<double> running;
  std::optional<double> waiting;
  std::optional<double> preemptions;  // the counter's value
  std::optional<double> preemptions_per_s;
  std::optional<double> prefix_hit_pct;
  std::optional<double> prompt_tokens_per_s;
  std::optional<double> generation_tokens_per_s;
  std::optional<double> ttft_p50, ttft_p90, ttft_p99;  // seconds
  std::optional<double> itl_p50, itl_p99;              // seconds
  // Tokens the KV cache holds: reported (llama-server), or usage x the server's pool.
  std::optional<double> kv_tokens;
};

// rate() of a counter between two reads `dt` seconds apart, with resets counted from 0.
std::optional<double> counter_rate(std::optional<double> now, std::optional<double> before,
                                   double dt);

class WatchSeries {
 public:
  static constexpr double kDefaultWindow = 30.0;
  static constexpr std::size_t kDefaultMaxPoints = 3600;  // an hour at one scrape a second

  explicit WatchSeries(double window_seconds = kDefaultWindow,
                       std::size_t max_points = kDefaultMaxPoints);

  // Adds the scrape read at `time` (seconds on any steady clock); returns its point.
  const WatchPoint& add(double time, ServerSample sample);
  void clear();

  const std::deque<WatchPoint>& points() const { return points_; }
  bool empty() const { return points_.empty(); }
  // The newest scrape, or nullptr.
  const ServerSample* latest() const;
  double window() const { return window_; }

 private:
  struct Scrape {
    double time;
    ServerSample sample;
  };
  WatchPoint point_for(const Scrape& now) const;
  void window_figures(const Scrape& now, WatchPoint& p) const;

  double window_;
  std::size_t max_points_;
  double origin_ = 0.0;
  std::deque<Scrape> recent_;  // the scrapes of the last window (and the one before it)
  std::deque<WatchPoint> points_;
};

}  // namespace kvscope
