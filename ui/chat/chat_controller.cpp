// MainWindow: the chats (sidebar, current chat, sending, regenerating, stopping, saving,
// deleting with undo) and the dialogs that change how the next reply or model is made.
#include <QDateTime>
#include <QFileInfo>
#include <QLabel>
#include <QSettings>

#include <algorithm>
#include <utility>

#include "chat/chat_panel.h"
#include "chat/chat_store.h"
#include "chat/session.h"
#include "chat/sidebar.h"
#include "panel/live_panel.h"
#include "window/load_dialog.h"
#include "window/main_window.h"
#include "window/notice_bar.h"
#include "window/sampling_dialog.h"
#include "window/settings_keys.h"
#include "worker/engine_controller.h"

namespace kvscope::ui {

ChatSession* MainWindow::newChat() {
  const ChatId id = next_chat_++;
  auto* s = new ChatSession(id, tr("Chat %1").arg(id), this);
  // Sampling as the loaded model's authors advise (its generation_config.json), else KVScope's.
  s->setSampling(defaultSamplingSettings(model_ ? model_->sampling_defaults : SamplingDefaults{}));
  if (ChatSession* current = currentSession()) s->setSystemPrompt(current->systemPrompt());
  adopt(s);
  select_chat(id);
  return s;
}

// A chat joins the window: the sidebar lists it, and every change is saved.
void MainWindow::adopt(ChatSession* s) {
  const ChatId id = s->id();
  sessions_[id] = s;
  sidebar_->addSession(s);
  connect(s, &ChatSession::contextUsedChanged, this, [this, id] {
    if (id == current_) update_context_label();
  });
  connect(s, &ChatSession::titleChanged, this, &MainWindow::update_chat_names);
  connect(s, &ChatSession::contentChanged, this, [this, s] { save_chat(s); });
  update_chat_names();
}

// The saved chats come back (listed, not loaded into the engine: continuing one reads its
// conversation into the cache again). A store that cannot be opened leaves the app running
// with chats that are not saved, and says why.
void MainWindow::restore_chats(QStringList* problems) {
  if (config_.chats_path.isEmpty()) return;
  QString error;
  store_ = ChatStore::open(config_.chats_path, &error);
  if (!store_) {
    problems->push_back(tr("Chats are not being saved: %1").arg(error));
    return;
  }
  for (ChatSession* s : store_->load(this, problems)) {
    adopt(s);
    next_chat_ = std::max(next_chat_, s->id() + 1);
  }
}

// Chats with nothing in them are not written until they have a message.
void MainWindow::save_chat(ChatSession* s) {
  if (!store_ || (s->items().isEmpty() && !store_->contains(s->id()))) return;
  QString error;
  if (!store_->save(*s, &error))
    notice_->showError(tr("The chat could not be saved: %1").arg(error));
}

QList<ChatSession*> MainWindow::sessions() const {
  QList<ChatSession*> all;
  for (const auto& [id, s] : sessions_) all.push_back(s);
  return all;
}

// The loaded model as a chat records it: its file's size and time, so a chat opened later
// can tell a different or a rewritten file.
ModelRef MainWindow::model_ref() const {
  ModelRef ref;
  if (!model_) return ref;
  ref.name = model_->name;
  if (model_->demo) return ref;
  const QFileInfo file(model_->path);
  ref.path = file.absoluteFilePath();
  if (file.isFile()) ref.size = file.size();
  ref.mtime_ms = file.lastModified().toMSecsSinceEpoch();
  return ref;
}

void MainWindow::update_chat_note() {
  const ChatSession* s = currentSession();
  QString note;
  if (s && s->model().isSet() && !s->items().isEmpty()) {
    const ModelRef& was = s->model();
    const ModelRef now = model_ref();
    if (!now.isSet()) {
      note = tr("This chat was written with %1; no model is loaded now.").arg(was.name);
    } else if (was.path == now.path && !was.sameFile(now)) {
      note = tr("%1 has changed on disk since this chat was written; replies now come from the "
                "file as it is.")
                 .arg(was.name);
    } else if (!was.sameFile(now)) {
      note = tr("This chat was written with %1. Replies now come from %2, which reads the whole "
                "conversation again.")
                 .arg(was.name, now.name);
    }
  }
  chat_panel_->setChatNote(note);
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
  update_chat_note();
}

// A chat that is generating is stopped first; its sequence's blocks are freed by the
// engine when the cancellation lands. The saved copy goes at once; the session itself is
// kept while the sidebar offers Undo, which saves it again.
void MainWindow::delete_chat(ChatId chat) {
  ChatSession* s = session(chat);
  if (!s) return;
  engine_->forget(chat);  // stops its reply and releases the cache it kept
  disconnect(s, nullptr, this, nullptr);
  if (s->generating()) s->finishReply({chat, FinishReason::Cancelled, {}, 0, 0});
  sessions_.erase(chat);
  sidebar_->removeSession(chat);
  QString error;
  if (store_ && store_->contains(chat) && !store_->remove(chat, &error)) {
    notice_->showError(tr("The chat could not be deleted from the saved chats: %1").arg(error));
  }
  finish_delete();  // the one deleted before can no longer come back
  if (!s->items().isEmpty()) {
    deleted_ = s;
    sidebar_->offerUndo(s->title());
  } else {
    s->deleteLater();
  }
  if (chat == current_) current_ = 0;
  if (sessions_.empty()) newChat();
  if (current_ == 0) {
    select_chat(sessions_.begin()->first);
  }
  update_chat_names();
}

void MainWindow::undo_delete() {
  if (!deleted_) return;
  ChatSession* s = std::exchange(deleted_, nullptr);
  sidebar_->hideUndo();
  adopt(s);
  save_chat(s);
  select_chat(s->id());
}

void MainWindow::finish_delete() {
  if (deleted_) std::exchange(deleted_, nullptr)->deleteLater();
}

void MainWindow::sendMessage(const QString& text) {
  ChatSession* s = currentSession();
  if (!s || s->generating() || !model_) return;
  s->setModel(model_ref());
  update_chat_note();
  engine_->submit(s->beginUserTurn(text));
}

// A new reply from the same prompt (with a new seed). See the issue note: sharing the
// prompt's blocks with the previous reply needs an engine fork-from-prompt.
void MainWindow::regenerate() {
  ChatSession* s = currentSession();
  if (!s || !model_ || s->generating()) return;
  s->setModel(model_ref());
  update_chat_note();
  if (auto request = s->beginRegenerate()) engine_->submit(*request);
}

void MainWindow::stopCurrent() {
  if (ChatSession* s = currentSession(); s && s->generating()) engine_->stop(s->id());
}

}  // namespace kvscope::ui
