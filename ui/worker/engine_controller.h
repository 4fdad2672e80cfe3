// EngineController: the GUI thread's handle on the EngineWorker. It starts the worker's
// QThread, forwards requests to it and its results back, all over explicit queued
// connections, and never waits on it, except once when it is destroyed: then the thread
// is asked to quit and joined, and the worker (with the engine and any generation in
// flight) is deleted on its own thread. Closing the window mid-generation is therefore a
// cancel and a join, never a crash or a leak.
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

 signals:
  // Results, emitted on the GUI thread (see EngineWorker for their meaning).
  void modelLoading(const QString& what);
  void modelLoaded(const kvscope::ui::ModelInfo& info);
  void modelFailed(const QString& error);
  void replyStarted(kvscope::ui::ChatId chat, qint64 prompt_tokens);
  void replyText(kvscope::ui::ChatId chat, const QString& text, qint64 generated_tokens);
  void promptProgress(kvscope::ui::ChatId chat, qint64 done, qint64 total);
  void replyFinished(const kvscope::ui::ReplyFinished& result);
  void frameReady(const kvscope::ui::PanelFrame& frame);
  void speedMeasured(const kvscope::ui::SpeedSample& speed);
  void busyChanged(bool busy);
  void planCheckDone(const kvscope::PlanCheck& check);
  void planCheckFailed(const QString& error);

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
