#include "remote/metrics_poller.h"

#include <chrono>

#include "util/error.h"

namespace kvscope {

double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

MetricsPoller::MetricsPoller(MetricsEndpoint endpoint, double interval, ScrapeOptions options,
                             Callback callback)
    : endpoint_(std::move(endpoint)),
      interval_(interval),
      options_(options),
      callback_(std::move(callback)) {
  if (!(interval_ > 0)) throw_error<UsageError>("poll interval {} s: must be > 0", interval_);
  thread_ = std::thread([this] {
    run();
    finished_ = true;
  });
}

MetricsPoller::~MetricsPoller() {
  stop();
}

void MetricsPoller::request_stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
}

void MetricsPoller::stop() {
  request_stop();
  if (thread_.joinable()) thread_.join();
}

void MetricsPoller::run() {
  using clock = std::chrono::steady_clock;
  auto next = clock::now();
  for (std::int64_t index = 0;; ++index) {
    {
      std::lock_guard lock(mutex_);
      if (stopping_) return;
    }
    PolledScrape scrape;
    scrape.time = steady_seconds();
    scrape.index = index;
    scrape.result = scrape_metrics(endpoint_, options_);
    callback_(std::move(scrape));
    // The next tick on the schedule; after a slow scrape, the next one starts at once
    // rather than catching up with a burst.
    next += std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(interval_));
    if (next < clock::now()) next = clock::now();
    std::unique_lock lock(mutex_);
    if (wake_.wait_until(lock, next, [this] { return stopping_; })) return;
  }
}

}  // namespace kvscope
