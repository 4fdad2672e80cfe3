#include "drivers/screenshot_driver.h"
#include "chat/chat_controller.h"

#include <QApplication>
#include <QBarSet>
#include <QDir>
#include <QLineSeries>
#include <QPixmap>
#include <QTabWidget>
#include <QTimer>

#include <cstdio>
#include <string>

#include "chat/chat_panel.h"
#include "chat/session.h"
#include "chat/view.h"
#include "fits/fits_page.h"
#include "models/catalog_view.h"
#include "models/models_page.h"
#include "panel/block_map_widget.h"
#include "panel/fragmentation_chart.h"
#include "panel/layer_chart.h"
#include "panel/live_panel.h"
#include "panel/memory_chart.h"
#include "remote/remote_page.h"
#include "window/main_window.h"

namespace kvscope::ui {

ScreenshotDriver::ScreenshotDriver(MainWindow* window, ScreenshotPlan plan)
    : QObject(window), window_(window), plan_(std::move(plan)) {
  connect(window_, &MainWindow::modelReady, this, &ScreenshotDriver::on_model_ready);
  connect(window_, &MainWindow::modelError, this, &ScreenshotDriver::fail);
  connect(window_->chats(), &ChatController::replyText, this, &ScreenshotDriver::on_text);
  connect(window_->chats(), &ChatController::replyFinished, this, &ScreenshotDriver::on_finished);
  QTimer::singleShot(plan_.timeout_ms, this, [this] { fail(QStringLiteral("timed out")); });
}

void ScreenshotDriver::on_model_ready() {
  if (started_) return;
  started_ = true;
  ChatSession* s = window_->chats()->currentSession();
  SamplingSettings sampling = s->sampling();
  sampling.max_tokens = plan_.max_tokens;
  sampling.params.seed = 7;
  s->setSampling(sampling);
  first_ = s->id();
  window_->chats()->sendMessage(plan_.first_prompt);
}

void ScreenshotDriver::on_text(ChatId chat, qint64 generated) {
  if (chat == first_ && second_ == 0 && generated >= plan_.second_chat_after) {
    second_ = window_->chats()->newChat()->id();
    window_->chats()->sendMessage(plan_.second_prompt);
  } else if (chat == second_ && !grabbed_mid_ && generated >= plan_.grab_after) {
    grabbed_mid_ = true;
    grab(QStringLiteral("mid"));
  } else if (chat == second_ && regenerating_ && !grabbed_regenerate_ &&
             generated >= plan_.grab_after / 2) {
    grabbed_regenerate_ = true;
    grab(QStringLiteral("regenerate"));
  }
}

void ScreenshotDriver::on_finished(const ReplyFinished& result) {
  if (result.chat != first_ && result.chat != second_) return;
  if (regenerating_) {
    if (result.chat != second_) return;
    if (!grabbed_regenerate_) {  // it stopped early, as above: shoot now
      std::printf("note: the regenerated reply ended before its shot; taken after it\n");
      grabbed_regenerate_ = true;
      grab(QStringLiteral("regenerate"));
    }
    QTimer::singleShot(400, this, [this] { grab_pages_and_quit(); });
    return;
  }
  std::printf("chat %lld: %lld prompt tokens, %lld generated, ended: %s\n",
              static_cast<long long>(result.chat), static_cast<long long>(result.prompt_tokens),
              static_cast<long long>(result.generated_tokens),
              std::string(finish_reason_name(result.reason)).c_str());
  if (result.reason == FinishReason::Error) {
    fail(QStringLiteral("reply failed: %1").arg(result.error));
    return;
  }
  if (++finished_ < 2) return;
  if (!grabbed_mid_) {  // a model that stops early (a base model's stop string): shoot now
    std::printf(
        "note: the replies ended before %lld tokens of chat 2; the mid shot is taken "
        "after them\n",
        static_cast<long long>(plan_.grab_after));
    grabbed_mid_ = true;
    grab(QStringLiteral("mid"));
  }
  // The worker's last frame (the cache after both replies) follows the finish signals.
  QTimer::singleShot(400, this, [this] {
    grab(QStringLiteral("after"));
    if (!check_panel()) return;
    regenerating_ = true;  // chat 2 is the current chat
    window_->chats()->regenerate();
  });
}

void ScreenshotDriver::grab(const QString& name) {
  window_->chatPanel()->view()->flush();
  window_->livePanel()->drawNow();
  const QString path =
      QDir(plan_.out_dir).filePath(QStringLiteral("%1-%2.png").arg(plan_.prefix, name));
  if (!window_->grab().save(path)) fail(QStringLiteral("cannot write %1").arg(path));
  std::printf("saved %s\n", qPrintable(path));
}

// Each page beside the chat, then the chat again. The Models page scans when first shown,
// so it is saved when its scan ends.
// A chat saved by an earlier run, opened (with its note when another model wrote it).
void ScreenshotDriver::grab_saved_chat() {
  for (ChatSession* s : window_->chats()->sessions()) {
    if (s->id() == first_ || s->id() == second_ || s->items().isEmpty()) continue;
    window_->chats()->selectChat(s->id());
    QApplication::processEvents();
    grab(QStringLiteral("saved-chat"));
    window_->chats()->selectChat(second_);
    return;
  }
}

void ScreenshotDriver::grab_pages_and_quit() {
  grab_saved_chat();
  ModelsPage* models = window_->modelsPage();
  window_->pages()->setCurrentWidget(models);
  if (models->scanning()) {
    connect(models, &ModelsPage::scanFinished, this, &ScreenshotDriver::grab_models_and_rest,
            Qt::SingleShotConnection);
  } else {
    grab_models_and_rest();
  }
}

void ScreenshotDriver::grab_models_and_rest() {
  QTabWidget* pages = window_->pages();
  QApplication::processEvents();
  grab(QStringLiteral("models"));
  ModelsPage* models = window_->modelsPage();
  models->tabs()->setCurrentWidget(models->catalogView());  // the download catalog
  QApplication::processEvents();
  grab(QStringLiteral("models-download"));
  models->tabs()->setCurrentIndex(0);
  pages->setCurrentWidget(window_->fitsPage());
  grab(QStringLiteral("fits"));
  for (int i = 0; i < pages->count(); ++i) {
    if (qobject_cast<RemotePage*>(pages->widget(i)) == nullptr) continue;
    pages->setCurrentIndex(i);  // not connected: its form and empty charts
    QApplication::processEvents();
    grab(QStringLiteral("remote"));
  }
  auto* demos = qobject_cast<QTabWidget*>(pages->widget(pages->count() - 1));
  pages->setCurrentWidget(demos);
  const QStringList names = {"demo-paging", "demo-prefix", "demo-gqa", "demo-quant"};
  for (int i = 0; demos != nullptr && i < demos->count() && i < names.size(); ++i) {
    demos->setCurrentIndex(i);
    QApplication::processEvents();
    grab(names[i]);
  }
  pages->setCurrentIndex(0);
  QApplication::exit(0);
}

bool ScreenshotDriver::check_panel() {
  LivePanel* panel = window_->livePanel();
  QStringList empty;
  if (panel->fragmentationChart()->pagedSeries()->count() == 0) empty << "fragmentation";
  if (panel->memoryChart()->upperSeries(kKvUsed)->count() == 0) empty << "memory";
  if (panel->layerChart()->bytesSet()->count() == 0) empty << "per-layer";
  if (panel->blockMap()->blockCount() == 0) empty << "block map";
  if (!empty.isEmpty()) {
    fail(QStringLiteral("empty panel parts: %1").arg(empty.join(", ")));
    return false;
  }
  std::printf("panel ok: %lld time points, %lld memory points, %lld layers, %lld blocks\n",
              static_cast<long long>(panel->fragmentationChart()->pagedSeries()->count()),
              static_cast<long long>(panel->memoryChart()->upperSeries(kKvUsed)->count()),
              static_cast<long long>(panel->layerChart()->bytesSet()->count()),
              static_cast<long long>(panel->blockMap()->blockCount()));
  return true;
}

void ScreenshotDriver::fail(const QString& why) {
  std::fprintf(stderr, "screenshot run failed: %s\n", qPrintable(why));
  QApplication::exit(1);
}

}  // namespace kvscope::ui
