#include "models/model_scanner.h"

#include <QThread>

#include <utility>

namespace kvscope::ui {

ModelScanner::ModelScanner(QObject* parent) : QObject(parent) {}

ModelScanner::~ModelScanner() {
  if (thread_ == nullptr) return;
  thread_->disconnect(this);
  thread_->wait();
  delete thread_;
}

void ModelScanner::scan(std::vector<ModelPlace> places) {
  if (scanning()) {
    queued_ = std::move(places);
    return;
  }
  start(std::move(places));
}

void ModelScanner::start(std::vector<ModelPlace> places) {
  auto result = std::make_shared<std::vector<LocalModel>>();
  result_ = result;
  // The thread owns copies of everything it reads: nothing is shared while it runs.
  thread_ = QThread::create(
      [result, places = std::move(places)] { *result = scan_local_models(places); });
  connect(thread_, &QThread::finished, this, &ModelScanner::on_thread_finished);
  thread_->start(QThread::LowPriority);
  emit started();
}

void ModelScanner::on_thread_finished() {
  thread_->deleteLater();
  thread_ = nullptr;
  if (queued_) {
    std::vector<ModelPlace> next = std::move(*queued_);
    queued_.reset();
    start(std::move(next));
    return;
  }
  models_ = std::move(*result_);
  result_.reset();
  emit finished();
}

}  // namespace kvscope::ui
