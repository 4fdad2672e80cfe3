// MainWindow: the pages beside the chat. "Models" (the models already on this computer,
// opened with a double-click), "What fits" (the planner, checked against the loaded
// engine), "Remote" (a vLLM, llama-server or KVScope server's /metrics, live) and the demos
// (paged vs contiguous, prefix sharing, GQA, KV quantization), which run on the engine's own
// allocator and formats and need no model; the GQA and quantization demos also show the
// loaded model.
#include <QTabWidget>

#include "demos/gqa/gqa_page.h"
#include "demos/paging/paging_page.h"
#include "demos/prefix/prefix_page.h"
#include "demos/quant/quant_page.h"
#include "fits/fits_page.h"
#include "models/models_page.h"
#include "remote/remote_page.h"
#include "window/main_window.h"
#include "worker/engine_controller.h"
#include "worker/engine_worker.h"

namespace kvscope::ui {

QWidget* MainWindow::build_pages(QWidget* chat) {
  pages_ = new QTabWidget(this);
  pages_->setDocumentMode(true);
  pages_->addTab(chat, tr("Chat"));

  models_ = new ModelsPage(ModelsPageConfig::thisComputer(), pages_);
  pages_->addTab(models_, tr("Models"));
  connect(models_, &ModelsPage::openRequested, this, [this](const QString& path) {
    openModel(path);
    pages_->setCurrentIndex(0);  // the chat shows the model loading
  });

  fits_ = new FitsPage(pages_);
  pages_->addTab(fits_, tr("What fits"));
  connect(fits_, &FitsPage::checkRequested, engine_, &EngineController::checkPlan);
  connect(engine_->worker(), &EngineWorker::planCheckDone, fits_, &FitsPage::showPlanCheck);
  connect(engine_->worker(), &EngineWorker::planCheckFailed, fits_, &FitsPage::showPlanCheckError);

  pages_->addTab(new RemotePage(pages_), tr("Remote"));  // a serving engine's /metrics, live

  auto* demos = new QTabWidget(pages_);
  demos->addTab(new PagingDemoPage(demos), tr("Paged vs contiguous"));
  demos->addTab(new PrefixSharingDemoPage(demos), tr("Prefix sharing"));
  gqa_ = new GqaDemoPage(demos);
  demos->addTab(gqa_, tr("GQA"));
  quant_ = new KvQuantDemoPage(demos);
  demos->addTab(quant_, tr("KV quantization"));
  pages_->addTab(demos, tr("Demos"));
  return pages_;
}

void MainWindow::show_model_in_pages(const std::optional<ModelInfo>& info) {
  fits_->setLoadedModel(info);
  gqa_->setLoadedModel(info);
  quant_->setLoadedModel(info);
}

}  // namespace kvscope::ui
