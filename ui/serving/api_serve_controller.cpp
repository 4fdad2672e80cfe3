#include "serving/api_serve_controller.h"

#include <QMetaObject>

#include <atomic>
#include <exception>
#include <thread>
#include <utility>

#include "worker/engine_controller.h"

namespace kvscope::ui {

struct ApiServeController::Run {
  std::shared_ptr<serve::ApiServer> server;  // shared with the panel's labeller (weakly)
  std::thread thread;
  std::atomic<bool> stopping{false};
  QString host;
};

ApiServeController::ApiServeController(EngineController* engine)
    : QObject(engine), engine_(engine), host_(engine->host()) {}

// The engine worker is gone by now (see the constructor): only the server is stopped. A stop
// that comes before the server listens makes its run() return at once, so the join ends.
ApiServeController::~ApiServeController() {
  if (!run_) return;
  run_->stopping = true;
  host_.close();
  run_->server->stop();
  run_->thread.join();
}

void ApiServeController::start(const serve::ServedModel& model,
                               const serve::ServerOptions& options) {
  if (run_) return;
  host_.open();
  auto run = std::make_shared<Run>();
  run->server = std::make_shared<serve::ApiServer>(host_, model, options);
  run->host = QString::fromStdString(options.host);
  // Bind and serve on the run's thread: neither may wait on the GUI thread.
  run->thread = std::thread([this, r = run.get()] {
    QString error;
    int port = 0;
    try {
      port = r->server->bind();
    } catch (const std::exception& e) {
      error = QString::fromUtf8(e.what());
    }
    if (port > 0) {
      QMetaObject::invokeMethod(
          this, [this, port] { on_bound(port); }, Qt::QueuedConnection);
      if (!r->stopping) r->server->run();
    }
    QMetaObject::invokeMethod(
        this, [this, error] { on_ended(error); }, Qt::QueuedConnection);
  });
  run_ = std::move(run);
}

void ApiServeController::stop() {
  if (!run_ || run_->stopping) return;
  run_->stopping = true;
  host_.close();  // waiting HTTP threads give up now; their cancels still reach the engine
  run_->server->stop();
}

std::int64_t ApiServeController::clients() const {
  return run_ ? run_->server->metrics().connections() : 0;
}

void ApiServeController::on_bound(int port) {
  if (!run_) return;
  url_ = QStringLiteral("http://%1:%2").arg(run_->host).arg(port);
  std::weak_ptr<serve::ApiServer> server = run_->server;
  engine_->setApiRequests([server] {
    const auto s = server.lock();
    return s ? s->active_requests() : std::vector<std::pair<std::int64_t, RequestId>>{};
  });
  emit started(url_);
}

void ApiServeController::on_ended(const QString& error) {
  const bool served = !url_.isEmpty();
  join();
  // After the thread: every HTTP thread has ended and its cancels are queued to the engine
  // ahead of this release, so the requests' sequences and kept prefixes are all let go.
  if (served) engine_->releaseKeptCaches();
  if (!served && !error.isEmpty()) {
    emit failed(error);
  } else {
    emit stopped();
  }
}

void ApiServeController::join() {
  engine_->setApiRequests({});
  if (run_ && run_->thread.joinable()) run_->thread.join();
  run_.reset();
  url_.clear();
}

}  // namespace kvscope::ui
