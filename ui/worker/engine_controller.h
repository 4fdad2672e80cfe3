// EngineController: the GUI thread's handle on the EngineWorker. It starts the worker's
// QThread and forwards requests to it over explicit queued connections; receivers connect
// to the worker's results directly (worker()). It never waits on the worker, except once
// when it is destroyed: then the thread is asked to quit and joined, and the worker (with
// the engine and any generation in flight) is deleted on its own thread. Closing the window
// mid-generation is therefore a cancel and a join, never a crash or a leak.
#pragma once

#include <QObject>
#include <QThread>

#include <cstdint>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "worker/engine_messages.h"

namespace kvscope::serve {
class EngineHost;
}

namespace kvscope::ui {

class EngineWorker;

class EngineController : public QObject {
  Q_OBJECT

 public:
  explicit EngineController(const QString& demo_folder, QObject* parent = nullptr);
  ~EngineController() override;

  // Loads `request` after the load in progress (if any) is cancelled.
  void loadModel(LoadRequest request);
  void submit(const ChatRequest& request) { emit submitRequested(request); }
  void stop(ChatId chat) { emit stopRequested(chat); }
  void forget(ChatId chat) { emit forgetRequested(chat); }
  void checkPlan() { emit checkPlanRequested(); }
  void setPanelEnabled(bool enabled) { emit panelEnabledRequested(enabled); }
  void releaseKeptCaches() { emit releaseKeptCachesRequested(); }
  // The worker as the API server's engine host (thread-safe; lives as long as this).
  serve::EngineHost& host();
  // See EngineWorker::setApiRequests (thread-safe, applies from the next panel frame).
  void setApiRequests(std::function<std::vector<std::pair<std::int64_t, RequestId>>()> source);
  // The worker, for connecting to its results (EngineWorker's signals): they come on its
  // thread, so a receiver on the GUI thread gets them queued. Not for calling it.
  const EngineWorker* worker() const { return worker_; }

 signals:
  // Requests, delivered to the worker's thread.
  void loadRequested(const kvscope::ui::LoadRequest& request);
  void submitRequested(const kvscope::ui::ChatRequest& request);
  void stopRequested(kvscope::ui::ChatId chat);
  void forgetRequested(kvscope::ui::ChatId chat);
  void checkPlanRequested();
  void panelEnabledRequested(bool enabled);
  void releaseKeptCachesRequested();

 private:
  QThread thread_;
  std::shared_ptr<LoadCancel> cancel_ = std::make_shared<LoadCancel>();
  EngineWorker* worker_ = nullptr;  // lives on thread_, deleted there when it finishes
};

}  // namespace kvscope::ui
