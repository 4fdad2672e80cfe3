#include "bench_driver.h"

#include <QApplication>

#include <algorithm>
#include <cstdio>

#include "chat_session.h"
#include "main_window.h"

namespace kvscope::ui {
namespace {

double median(QVector<double> v) {
  if (v.isEmpty()) return 0.0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
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
  connect(window_, &MainWindow::replyText, this, &BenchDriver::on_text);
  connect(window_, &MainWindow::replyFinished, this, &BenchDriver::on_finished);
}

// Even runs with the panel, odd runs without, so drift affects both alike.
void BenchDriver::start_run() {
  window_->setPanelVisible(run_ % 2 == 0);
  ChatSession* s = window_->newChat();
  SamplingSettings sampling = s->sampling();
  sampling.max_tokens = tokens_;
  sampling.params.seed = 11;
  s->setSampling(sampling);
  chat_ = s->id();
  first_tokens_ = -1;
  window_->sendMessage(QStringLiteral("Once upon a time"));
}

// The clock starts at the first streamed text, so prompt processing is not counted.
void BenchDriver::on_text(ChatId chat, qint64 generated) {
  if (chat != chat_ || first_tokens_ >= 0) return;
  first_tokens_ = generated;
  clock_.start();
}

void BenchDriver::on_finished(const ReplyFinished& result) {
  if (result.chat != chat_) return;
  const double seconds = static_cast<double>(clock_.nsecsElapsed()) / 1e9;
  const qint64 decoded = result.generated_tokens - std::max<qint64>(first_tokens_, 0);
  const double rate = seconds > 0 ? static_cast<double>(decoded) / seconds : 0.0;
  const bool visible = run_ % 2 == 0;
  (visible ? visible_ : hidden_).append(rate);
  std::printf("run %d: panel %s, %lld tokens, %.1f tokens/s\n", run_,
              visible ? "visible" : "hidden ", static_cast<long long>(decoded), rate);
  if (++run_ < runs_) {
    start_run();
  } else {
    report();
  }
}

void BenchDriver::report() {
  const double v = median(visible_), h = median(hidden_);
  std::printf("median decode tokens/s: panel visible %.1f, hidden %.1f, cost %.2f%%\n", v, h,
              h > 0 ? 100.0 * (h - v) / h : 0.0);
  QApplication::exit(0);
}

}  // namespace kvscope::ui
