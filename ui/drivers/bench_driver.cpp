#include "drivers/bench_driver.h"
#include "chat/chat_controller.h"

#include <QApplication>

#include <algorithm>
#include <cstdio>
#include <ctime>

#include "chat/session.h"
#include "util/stats.h"
#include "window/main_window.h"

namespace kvscope::ui {
namespace {

double thread_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) / 1e9;
}

}  // namespace

BenchDriver::BenchDriver(MainWindow* window, int runs, qint64 tokens)
    : QObject(window), window_(window), runs_(runs), tokens_(tokens) {
  connect(window_, &MainWindow::modelReady, this, [this] {
    if (!started_) {
      started_ = true;
      start_run();
    }
  });
  connect(window_, &MainWindow::modelError, this, [](const QString& error) {
    std::fprintf(stderr, "bench: %s\n", qPrintable(error));
    QApplication::exit(1);
  });
  connect(window_->chats(), &ChatController::replyText, this, &BenchDriver::on_text);
  connect(window_->chats(), &ChatController::replyFinished, this, &BenchDriver::on_finished);
  connect(window_, &MainWindow::speedMeasured, this, [this](const SpeedSample& s) {
    step_s_ += s.step_seconds;
    frame_s_ += s.frame_seconds;
  });
}

// Even runs with the panel, odd runs without, so drift affects both alike.
void BenchDriver::start_run() {
  window_->setPanelVisible(run_ % 2 == 0);
  ChatSession* s = window_->chats()->newChat();
  SamplingSettings sampling = s->sampling();
  sampling.max_tokens = tokens_;
  sampling.params.seed = 11;
  s->setSampling(sampling);
  chat_ = s->id();
  first_tokens_ = -1;
  window_->chats()->sendMessage(QStringLiteral("Once upon a time"));
}

// The clock starts at the first streamed text, so prompt processing is not counted.
void BenchDriver::on_text(ChatId chat, qint64 generated) {
  if (chat != chat_ || first_tokens_ >= 0) return;
  first_tokens_ = generated;
  clock_.start();
  gui_cpu0_ = thread_cpu_seconds();
  step_s_ = frame_s_ = 0;
}

void BenchDriver::on_finished(const ReplyFinished& result) {
  if (result.chat != chat_) return;
  const double seconds = static_cast<double>(clock_.nsecsElapsed()) / 1e9;
  const qint64 decoded = result.generated_tokens - std::max<qint64>(first_tokens_, 0);
  const double rate = seconds > 0 ? static_cast<double>(decoded) / seconds : 0.0;
  const bool visible = run_ % 2 == 0;
  (visible ? visible_ : hidden_).append(rate);
  // The panel's own work: frames taken on the engine thread, and all GUI-thread CPU time
  // (updates and painting), each as a share of the run's wall time.
  const double gui = (thread_cpu_seconds() - gui_cpu0_) / seconds;
  const double frames = step_s_ > 0 ? frame_s_ / (step_s_ + frame_s_) : 0.0;
  if (visible) {
    frame_share_ += frames;
    gui_share_ += gui;
  }
  std::printf(
      "run %d: panel %s, %lld tokens, %.1f tokens/s, engine thread in frames %.2f%%, "
      "GUI thread busy %.1f%%\n",
      run_, visible ? "visible" : "hidden ", static_cast<long long>(decoded), rate, 100.0 * frames,
      100.0 * gui);
  if (++run_ < std::max(runs_, 2)) {
    start_run();
  } else {
    report();
  }
}

void BenchDriver::report() {
  const double v = kvscope::median(visible_), h = kvscope::median(hidden_);
  std::printf("median decode tokens/s: panel visible %.1f, hidden %.1f, cost %.2f%%\n", v, h,
              h > 0 ? 100.0 * (h - v) / h : 0.0);
  const auto n = static_cast<double>(std::max<qsizetype>(1, visible_.size()));
  std::printf("panel visible, mean: engine thread in frames %.2f%%, GUI thread busy %.1f%%\n",
              100.0 * frame_share_ / n, 100.0 * gui_share_ / n);
  // The best run of each is the least disturbed by other load on the machine.
  const double bv = *std::max_element(visible_.begin(), visible_.end());
  const double bh = *std::max_element(hidden_.begin(), hidden_.end());
  std::printf("best decode tokens/s: panel visible %.1f, hidden %.1f, cost %.2f%%\n", bv, bh,
              bh > 0 ? 100.0 * (bh - bv) / bh : 0.0);
  QApplication::exit(0);
}

}  // namespace kvscope::ui
