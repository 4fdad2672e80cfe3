// SendDriver: `kvscope MODEL --send TEXT [--send TEXT ...]`. Once the model is loaded it sends
// each TEXT in the current chat, the next one when the reply before it has ended, and prints
// one line per event on stdout (flushed), for scripts and the crash test:
//   sent N / streaming N / finished N TOKENS REASON / all sent
// The window stays open afterwards, as if the user had typed the messages.
#pragma once

#include <QObject>
#include <QStringList>

#include "worker/engine_messages.h"

namespace kvscope::ui {

class MainWindow;

class SendDriver : public QObject {
  Q_OBJECT

 public:
  SendDriver(MainWindow* window, QStringList messages);

 private:
  void send_next();
  void on_text(ChatId chat);
  void on_finished(const ReplyFinished& result);

  MainWindow* window_;
  QStringList messages_;
  int sent_ = 0;
  ChatId chat_ = 0;
  bool streaming_ = false;
  bool started_ = false;
};

}  // namespace kvscope::ui
