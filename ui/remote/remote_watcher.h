// RemoteWatcher: the Remote page's link to a server. It runs engine/remote's MetricsPoller
// (its own thread: a slow or dead server never blocks the GUI) and hands each scrape to the
// GUI thread as a queued call, where scraped() is emitted. Disconnecting does not wait for
// a scrape in flight: the poller is asked to stop and deleted once its thread has ended,
// and a late result of an old connection is dropped.
#pragma once

#include <QObject>
#include <QString>

#include <memory>
#include <vector>

#include "remote/metrics_poller.h"

class QTimer;

namespace kvscope::ui {

class RemoteWatcher : public QObject {
  Q_OBJECT

 public:
  explicit RemoteWatcher(QObject* parent = nullptr);
  ~RemoteWatcher() override;  // waits for at most one scrape's timeouts

  // Starts polling `url` every `interval` seconds; false with `error` set for a bad URL.
  bool start(const QString& url, double interval, QString* error);
  void stop();
  bool running() const { return poller_ != nullptr; }
  QString url() const { return url_; }
  void setOptions(const ScrapeOptions& options) { options_ = options; }

 signals:
  // On the GUI thread, in scrape order. `time` in seconds on the steady clock.
  void scraped(double time, const kvscope::ScrapeResult& result);

 private:
  void reap();

  std::unique_ptr<MetricsPoller> poller_;
  std::vector<std::unique_ptr<MetricsPoller>> stopping_;  // asked to stop, thread may run
  QTimer* reaper_;
  ScrapeOptions options_;
  QString url_;
  quint64 generation_ = 0;  // a result of an older connection is dropped
};

}  // namespace kvscope::ui
