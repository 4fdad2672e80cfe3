// ModelScanner: runs scan_local_models() on its own thread, so a slow disk or a large added
// folder never blocks the GUI thread. One scan runs at a time; asking for a scan while one
// runs queues it (the latest places win) and drops the running scan's result when it ends,
// since it answers an older question. scan_local_models() cannot be interrupted, so
// destroying the scanner waits for the running scan: its walk is bounded (ScanLimits) and
// reads only headers.
#pragma once

#include <QObject>

#include <memory>
#include <optional>
#include <vector>

#include "model/discovery/model_scan.h"

class QThread;

namespace kvscope::ui {

class ModelScanner : public QObject {
  Q_OBJECT

 public:
  explicit ModelScanner(QObject* parent = nullptr);
  ~ModelScanner() override;

  void scan(std::vector<ModelPlace> places);
  bool scanning() const { return thread_ != nullptr; }
  // The last finished scan's models (valid after finished()).
  const std::vector<LocalModel>& models() const { return models_; }

 signals:
  void started();
  // The newest scan's models are in models().
  void finished();

 private:
  void start(std::vector<ModelPlace> places);
  void on_thread_finished();

  QThread* thread_ = nullptr;
  // Written by the scan thread, read here once its finished() arrives.
  std::shared_ptr<std::vector<LocalModel>> result_;
  std::optional<std::vector<ModelPlace>> queued_;
  std::vector<LocalModel> models_;
};

}  // namespace kvscope::ui
