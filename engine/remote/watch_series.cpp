#include "remote/watch_series.h"

#include <cmath>

namespace kvscope {

std::optional<double> counter_rate(std::optional<double> now, std::optional<double> before,
                                   double dt) {
  if (!now || !before || !(dt > 0)) return std::nullopt;
  const double increase = *now >= *before ? *now - *before : *now;  // reset: counts from 0
  return increase / dt;
}

namespace {

std::optional<double> finite(double v) {
  return std::isfinite(v) ? std::optional<double>(v) : std::nullopt;
}

std::optional<double> increase(std::optional<double> now, std::optional<double> before) {
  if (!now || !before) return std::nullopt;
  return *now >= *before ? *now - *before : *now;
}

}  // namespace

WatchSeries::WatchSeries(double window_seconds, std::size_t max_points)
    : window_(window_seconds), max_points_(max_points) {}

void WatchSeries::clear() {
  recent_.clear();
  points_.clear();
}

const ServerSample* WatchSeries::latest() const {
  return recent_.empty() ? nullptr : &recent_.back().sample;
}

const WatchPoint& WatchSeries::add(double time, ServerSample sample) {
  if (recent_.empty() && points_.empty()) origin_ = time;
  recent_.push_back({time, std::move(sample)});
  // Keep one scrape at or before the window's start, so the window is always covered.
  while (recent_.size() > 2 && recent_[1].time <= time - window_) recent_.pop_front();
  points_.push_back(point_for(recent_.back()));
  if (points_.size() > max_points_) points_.pop_front();
  return points_.back();
}

WatchPoint WatchSeries::point_for(const Scrape& now) const {
  const ServerSample& s = now.sample;
  WatchPoint p;
  p.seconds = now.time - origin_;
  if (s.kv_usage) p.kv_usage_pct = 100.0 * *s.kv_usage;
  p.running = s.running;
  p.waiting = s.waiting;
  p.preemptions = s.preemptions;
  p.kv_tokens = s.kv_tokens;
  if (!p.kv_tokens && s.kv_usage && s.kv_pool_tokens()) {
    p.kv_tokens = *s.kv_usage * static_cast<double>(*s.kv_pool_tokens());
  }
  if (s.prefix_hit_rate) p.prefix_hit_pct = 100.0 * *s.prefix_hit_rate;
  if (recent_.size() >= 2) {
    const Scrape& before = recent_[recent_.size() - 2];
    const double dt = now.time - before.time;
    p.prompt_tokens_per_s = counter_rate(s.prompt_tokens, before.sample.prompt_tokens, dt);
    p.generation_tokens_per_s =
        counter_rate(s.generation_tokens, before.sample.generation_tokens, dt);
    p.preemptions_per_s = counter_rate(s.preemptions, before.sample.preemptions, dt);
    window_figures(now, p);
  }
  return p;
}

// Figures over the window: from the oldest kept scrape inside it (or just before it).
void WatchSeries::window_figures(const Scrape& now, WatchPoint& p) const {
  const Scrape& first = recent_.front();
  const ServerSample& s = now.sample;
  if (!p.prefix_hit_pct) {
    const auto queries = increase(s.prefix_queries, first.sample.prefix_queries);
    const auto hits = increase(s.prefix_hits, first.sample.prefix_hits);
    if (queries && hits && *queries > 0) p.prefix_hit_pct = 100.0 * std::min(1.0, *hits / *queries);
  }
  if (!s.ttft.empty()) {
    const auto window = histogram_delta(s.ttft, first.sample.ttft);
    p.ttft_p50 = finite(histogram_quantile(0.50, window));
    p.ttft_p90 = finite(histogram_quantile(0.90, window));
    p.ttft_p99 = finite(histogram_quantile(0.99, window));
  }
  if (!s.inter_token.empty()) {
    const auto window = histogram_delta(s.inter_token, first.sample.inter_token);
    p.itl_p50 = finite(histogram_quantile(0.50, window));
    p.itl_p99 = finite(histogram_quantile(0.99, window));
  }
}

}  // namespace kvscope
