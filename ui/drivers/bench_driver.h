// BenchDriver: measures decode tokens/s of the real window with the live panel visible and
// hidden, alternating, each run a fresh chat with the same prompt and seed. Prints each run
// and the medians, then quits. (kvscope --bench-runs N --bench-tokens M)
#pragma once

#include <QElapsedTimer>
#include <QObject>
#include <QVector>

#include "worker/engine_messages.h"

namespace kvscope::ui {

class MainWindow;

class BenchDriver : public QObject {
  Q_OBJECT

 public:
  BenchDriver(MainWindow* window, int runs, qint64 tokens);

 private:
  void start_run();
  void on_text(ChatId chat, qint64 generated);
  void on_finished(const ReplyFinished& result);
  void report();

  MainWindow* window_;
  int runs_;
  qint64 tokens_;
  int run_ = 0;
  ChatId chat_ = 0;
  qint64 first_tokens_ = 0;
  QElapsedTimer clock_;
  QVector<double> visible_, hidden_;
  double gui_cpu0_ = 0;                     // GUI thread CPU seconds at the run's start
  double step_s_ = 0, frame_s_ = 0;         // engine thread, this run
  double frame_share_ = 0, gui_share_ = 0;  // summed over visible runs
  bool started_ = false;
};

}  // namespace kvscope::ui
