#include "worker/engine_controller.h"

#include "worker/engine_worker.h"

namespace kvscope::ui {

EngineController::EngineController(const QString& demo_folder, QObject* parent) : QObject(parent) {
  register_engine_metatypes();
  thread_.setObjectName(QStringLiteral("kvscope-engine"));
  worker_ = new EngineWorker(demo_folder, cancel_);
  worker_->moveToThread(&thread_);
  connect(&thread_, &QThread::finished, worker_, &QObject::deleteLater);

  constexpr auto queued = Qt::QueuedConnection;
  connect(this, &EngineController::loadRequested, worker_, &EngineWorker::loadModel, queued);
  connect(this, &EngineController::submitRequested, worker_, &EngineWorker::submitChat, queued);
  connect(this, &EngineController::stopRequested, worker_, &EngineWorker::stopChat, queued);
  connect(this, &EngineController::forgetRequested, worker_, &EngineWorker::forgetChat, queued);
  connect(this, &EngineController::checkPlanRequested, worker_, &EngineWorker::checkPlan, queued);
  connect(this, &EngineController::panelEnabledRequested, worker_, &EngineWorker::setPanelEnabled,
          queued);
  connect(this, &EngineController::releaseKeptCachesRequested, worker_,
          &EngineWorker::releaseKeptCaches, queued);

  thread_.start();
}

serve::EngineHost& EngineController::host() {
  return *worker_;
}

void EngineController::setApiRequests(
    std::function<std::vector<std::pair<std::int64_t, RequestId>>()> source) {
  worker_->setApiRequests(std::move(source));
}

void EngineController::loadModel(LoadRequest request) {
  request.generation = ++cancel_->latest;  // a load still running for an older one stops
  emit loadRequested(request);
}

// The worker's pending steps are dropped with its event loop; a step already running
// finishes first (one forward pass), a load stops at its next check, then the worker and its
// engine are deleted there.
EngineController::~EngineController() {
  cancel_->quitting = true;
  thread_.quit();
  thread_.wait();
}

}  // namespace kvscope::ui
