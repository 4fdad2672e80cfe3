// MainWindow: the chats (sidebar, current chat, sending, regenerating, stopping) and the
// dialogs that change how the next reply or model is made.
#include <QLabel>
#include <QSettings>

#include "chat/chat_panel.h"
#include "chat/session.h"
#include "chat/sidebar.h"
#include "panel/live_panel.h"
#include "window/load_dialog.h"
#include "window/main_window.h"
#include "window/sampling_dialog.h"
#include "worker/engine_controller.h"

namespace kvscope::ui {

ChatSession* MainWindow::newChat() {
  const ChatId id = next_chat_++;
  auto* s = new ChatSession(id, tr("Chat %1").arg(id), this);
  if (ChatSession* current = currentSession()) {
    s->setSampling(current->sampling());
    s->setSystemPrompt(current->systemPrompt());
  }
  sessions_[id] = s;
  sidebar_->addSession(s);
  connect(s, &ChatSession::contextUsedChanged, this, [this, id] {
    if (id == current_) update_context_label();
  });
  connect(s, &ChatSession::titleChanged, this, &MainWindow::update_chat_names);
  update_chat_names();
  select_chat(id);
  return s;
}

ChatSession* MainWindow::session(ChatId chat) const {
  auto it = sessions_.find(chat);
  return it != sessions_.end() ? it->second : nullptr;
}

ChatSession* MainWindow::currentSession() const {
  return session(current_);
}

void MainWindow::select_chat(ChatId chat) {
  if (chat == current_ || !session(chat)) return;
  current_ = chat;
  sidebar_->setCurrent(chat);
  chat_panel_->setSession(session(chat));
  update_context_label();
}

// A chat that is generating is stopped first; its sequence's blocks are freed by the
// engine when the cancellation lands.
void MainWindow::delete_chat(ChatId chat) {
  ChatSession* s = session(chat);
  if (!s) return;
  engine_->forget(chat);  // stops its reply and releases the cache it kept
  sessions_.erase(chat);
  sidebar_->removeSession(chat);
  if (chat == current_) current_ = 0;
  if (sessions_.empty()) newChat();
  if (current_ == 0) {
    select_chat(sessions_.begin()->first);
  }
  s->deleteLater();
  update_chat_names();
}

void MainWindow::sendMessage(const QString& text) {
  ChatSession* s = currentSession();
  if (!s || s->generating() || !model_) return;
  engine_->submit(s->beginUserTurn(text));
}

// A new reply from the same prompt (with a new seed). See the issue note: sharing the
// prompt's blocks with the previous reply needs an engine fork-from-prompt.
void MainWindow::regenerate() {
  ChatSession* s = currentSession();
  if (!s || !model_) return;
  if (auto request = s->beginRegenerate()) engine_->submit(*request);
}

void MainWindow::stopCurrent() {
  if (ChatSession* s = currentSession(); s && s->generating()) engine_->stop(s->id());
}

void MainWindow::show_open_dialog() {
  const QString last = QSettings().value("lastModel").toString();
  LoadDialog dialog(loading_path_.isEmpty() ? last : loading_path_, load_settings_, gpus_,
                    config_.cuda_available, config_.cuda_status, this);
  if (dialog.exec() != QDialog::Accepted) return;
  load_settings_ = dialog.settings();
  QSettings settings;
  load_settings_.write(settings);
  openModel(dialog.path());
}

void MainWindow::show_sampling_dialog() {
  ChatSession* s = currentSession();
  if (!s) return;
  SamplingDialog dialog(s->sampling(), model_ ? model_->context_length : 4096, this);
  if (dialog.exec() == QDialog::Accepted) s->setSampling(dialog.settings());
}

void MainWindow::update_context_label() {
  const ChatSession* s = currentSession();
  const qint64 used = s ? s->contextUsed() : 0;
  context_label_->setText(model_ ? tr("context %1 / %2").arg(used).arg(model_->context_length)
                                 : QString());
}

void MainWindow::update_chat_names() {
  std::map<ChatId, QString> names;
  for (const auto& [id, s] : sessions_) names[id] = s->title();
  live_panel_->setChatNames(std::move(names));
}

}  // namespace kvscope::ui
