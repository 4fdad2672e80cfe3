// MainWindow: File > "Serve this model": the OpenAI-compatible server on the loaded model,
// sharing the engine with the chats (ui/serving), and its line in the status bar.
#include <QFileInfo>
#include <QLabel>
#include <QStatusBar>
#include <QTimer>

#include "chat/chat_controller.h"
#include "run/model_sampling.h"
#include "serving/api_serve_controller.h"
#include "serving/serve_dialog.h"
#include "window/main_window.h"
#include "window/notice_bar.h"
#include "worker/engine_controller.h"
#include "worker/engine_worker.h"

namespace kvscope::ui {

namespace {

// The name clients send as "model", as kvscope-cli serve names it: the file's name without
// .gguf, or the folder's.
QString served_model_id(const ModelInfo& info) {
  const QFileInfo file(info.path);
  if (info.demo || info.path.isEmpty()) return info.name;
  return file.suffix() == QLatin1String("gguf") ? file.completeBaseName() : file.fileName();
}

}  // namespace

void MainWindow::build_serving() {
  serving_ = new ApiServeController(engine_);
  serve_label_ = new QLabel(this);
  serve_label_->setVisible(false);
  statusBar()->addPermanentWidget(serve_label_);
  connect(serving_, &ApiServeController::started, this, [this] { update_serve_status(nullptr); });
  connect(serving_, &ApiServeController::stopped, this, [this] { update_serve_status(nullptr); });
  connect(serving_, &ApiServeController::failed, this, [this](const QString& error) {
    notice_->showError(tr("The API server could not start: %1").arg(error));
    update_serve_status(nullptr);
  });
  // A model switch ends the API requests (the engine they ran on goes); the server, whose
  // model name and context were the old model's, stops with them.
  connect(engine_->worker(), &EngineWorker::modelLoading, this, [this] {
    if (!serving_->serving()) return;
    serving_->stop();
    notice_->showInfo(
        tr("The API server stopped: the model is being replaced. Start it again "
           "from File > Serve this model."));
  });
  // A task of the server's that threw on the engine instead of answering its request.
  connect(engine_->worker(), &EngineWorker::taskFailed, this, [this](const QString& error) {
    notice_->showError(tr("An API request failed on the engine: %1").arg(error));
  });
  // Clients come and go between panel frames (which stop while the panel is hidden).
  auto* clients = new QTimer(this);
  clients->setInterval(1000);
  connect(clients, &QTimer::timeout, this, [this] { update_serve_status(nullptr); });
  clients->start();
}

ServeDialog* MainWindow::showServeDialog() {
  if (!serve_dialog_) {
    serve_dialog_ = new ServeDialog(serving_, this);
    connect(serve_dialog_, &ServeDialog::startRequested, this, &MainWindow::start_serving);
  }
  serve_dialog_->show();
  serve_dialog_->raise();
  return serve_dialog_;
}

void MainWindow::start_serving(const serve::ServerOptions& options) {
  const std::optional<ModelInfo>& loaded = chats_->model();
  if (!loaded || loading_) {
    notice_->showError(tr("Load a model first: the API server serves the loaded model."));
    return;
  }
  serve::ServedModel model;
  model.id = served_model_id(*loaded).toStdString();
  model.context_length = loaded->context_length;
  // As kvscope-cli serve and vLLM: what the model publishes over OpenAI's defaults.
  model.sampling_defaults =
      with_model_defaults(loaded->sampling_defaults, serve::openai_sampling_defaults());
  serving_->start(model, options);
}

QString MainWindow::serveStatus() const {
  return serve_label_->isVisible() ? serve_label_->text() : QString();
}

void MainWindow::update_serve_status(const PanelFrame* frame) {
  if (frame) {
    api_running_ = frame->api_running;
    api_waiting_ = frame->api_waiting;
  }
  const QString url = serving_->url();
  serve_label_->setVisible(!url.isEmpty());
  if (url.isEmpty()) return;
  serve_label_->setText(tr("serving on %1 \u00b7 %2 clients \u00b7 %3 running \u00b7 %4 waiting")
                            .arg(url)
                            .arg(serving_->clients())
                            .arg(api_running_)
                            .arg(api_waiting_));
}

}  // namespace kvscope::ui
