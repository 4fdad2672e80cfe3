// MetricsPoller: scrapes one endpoint every `interval` seconds on its own thread and hands
// each result, good or bad, to a callback on that thread. A failed scrape is reported and
// the next one tried at the next tick, for as long as the poller lives; nothing a server
// answers can stop or crash it. Destroying the poller (or stop()) ends the thread within one
// scrape's timeouts: the wait between scrapes wakes at once.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

#include "remote/metrics_scrape.h"

namespace kvscope {

struct PolledScrape {
  double time = 0.0;       // seconds on the steady clock when the GET started
  std::int64_t index = 0;  // 0, 1, 2, ... in scrape order
  ScrapeResult result;
};

class MetricsPoller {
 public:
  using Callback = std::function<void(PolledScrape)>;

  // Starts scraping at once. `interval` in seconds (> 0).
  MetricsPoller(MetricsEndpoint endpoint, double interval, ScrapeOptions options,
                Callback callback);
  ~MetricsPoller();
  MetricsPoller(const MetricsPoller&) = delete;
  MetricsPoller& operator=(const MetricsPoller&) = delete;

  // Stops and waits for the thread: at most one scrape's timeouts.
  void stop();
  // Asks the thread to end after the scrape it may be in, without waiting (a GUI thread's
  // disconnect); finished() says when it has, and destroying the poller then waits for nothing.
  void request_stop();
  bool finished() const { return finished_; }

 private:
  void run();

  MetricsEndpoint endpoint_;
  double interval_;
  ScrapeOptions options_;
  Callback callback_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::atomic<bool> finished_{false};
  std::thread thread_;
};

// Seconds on the steady clock (the poller's PolledScrape::time).
double steady_seconds();

}  // namespace kvscope
