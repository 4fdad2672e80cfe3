#include "drivers/send_driver.h"
#include "chat/chat_controller.h"

#include <cstdio>
#include <string>

#include "chat/session.h"
#include "window/main_window.h"

namespace kvscope::ui {
namespace {

void say(const QString& line) {
  std::printf("%s\n", line.toUtf8().constData());
  std::fflush(stdout);
}

}  // namespace

SendDriver::SendDriver(MainWindow* window, QStringList messages)
    : QObject(window), window_(window), messages_(std::move(messages)) {
  connect(window_, &MainWindow::modelReady, this, [this] {
    if (started_) return;
    started_ = true;
    chat_ = window_->chats()->currentSession()->id();
    send_next();
  });
  connect(window_->chats(), &ChatController::replyText, this,
          [this](ChatId chat) { on_text(chat); });
  connect(window_->chats(), &ChatController::replyFinished, this, &SendDriver::on_finished);
}

void SendDriver::send_next() {
  if (sent_ == messages_.size()) {
    say(QStringLiteral("all sent"));
    return;
  }
  window_->chats()->selectChat(chat_);
  window_->chats()->sendMessage(messages_[sent_++]);
  streaming_ = false;
  say(QStringLiteral("sent %1").arg(sent_));
}

void SendDriver::on_text(ChatId chat) {
  if (chat != chat_ || streaming_) return;
  streaming_ = true;
  say(QStringLiteral("streaming %1").arg(sent_));
}

void SendDriver::on_finished(const ReplyFinished& result) {
  if (result.chat != chat_) return;
  const std::string reason(finish_reason_name(result.reason));
  say(QStringLiteral("finished %1 %2 %3")
          .arg(sent_)
          .arg(result.generated_tokens)
          .arg(QString::fromStdString(reason)));
  send_next();
}

}  // namespace kvscope::ui
