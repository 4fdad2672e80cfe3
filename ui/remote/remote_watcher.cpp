#include "remote/remote_watcher.h"

#include <QMetaObject>
#include <QTimer>

#include <algorithm>

#include "util/error.h"

namespace kvscope::ui {

RemoteWatcher::RemoteWatcher(QObject* parent) : QObject(parent), reaper_(new QTimer(this)) {
  reaper_->setInterval(200);
  connect(reaper_, &QTimer::timeout, this, &RemoteWatcher::reap);
}

RemoteWatcher::~RemoteWatcher() {
  poller_.reset();  // joins: its last callback has run before the members go
  stopping_.clear();
}

bool RemoteWatcher::start(const QString& url, double interval, QString* error) {
  MetricsEndpoint endpoint;
  try {
    endpoint = parse_metrics_url(url.trimmed().toStdString());
  } catch (const Error& e) {
    if (error != nullptr) *error = QString::fromStdString(e.what());
    return false;
  }
  stop();
  url_ = QString::fromStdString(endpoint.url());
  const quint64 generation = ++generation_;
  // Called on the poller's thread: hand the result to the GUI thread, where `this` lives.
  auto deliver = [this, generation](PolledScrape scrape) {
    auto result = std::make_shared<PolledScrape>(std::move(scrape));
    QMetaObject::invokeMethod(
        this,
        [this, generation, result] {
          if (generation == generation_) emit scraped(result->time, result->result);
        },
        Qt::QueuedConnection);
  };
  poller_ = std::make_unique<MetricsPoller>(endpoint, interval, options_, deliver);
  return true;
}

void RemoteWatcher::stop() {
  if (!poller_) return;
  ++generation_;
  poller_->request_stop();
  stopping_.push_back(std::move(poller_));
  reaper_->start();
}

void RemoteWatcher::reap() {
  std::erase_if(stopping_, [](const std::unique_ptr<MetricsPoller>& p) { return p->finished(); });
  if (stopping_.empty()) reaper_->stop();
}

}  // namespace kvscope::ui
