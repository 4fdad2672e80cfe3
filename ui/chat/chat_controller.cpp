#include "chat/chat_controller.h"

#include <QDateTime>
#include <QFileInfo>

#include <algorithm>
#include <utility>

#include "chat/chat_store.h"
#include "chat/session.h"
#include "window/sampling_dialog.h"
#include "worker/engine_controller.h"
#include "worker/engine_worker.h"

namespace kvscope::ui {

ChatController::ChatController(EngineController* engine, QObject* parent)
    : QObject(parent), engine_(engine) {
  connect_worker();
}

ChatController::~ChatController() = default;

// The worker's replies, each to its chat's session (a chat deleted meanwhile gets none).
void ChatController::connect_worker() {
  const EngineWorker* worker = engine_->worker();
  connect(worker, &EngineWorker::replyStarted, this, [this](ChatId chat, qint64 prompt) {
    if (ChatSession* s = session(chat)) s->replyStarted(prompt);
  });
  connect(worker, &EngineWorker::replyText, this,
          [this](ChatId chat, const QString& text, qint64 generated) {
            if (ChatSession* s = session(chat)) s->appendReplyText(text, generated);
            emit replyText(chat, generated);
          });
  connect(worker, &EngineWorker::promptProgress, this,
          [this](ChatId chat, qint64 done, qint64 total) {
            if (chat == current_) emit promptProgress(done, total);
          });
  connect(worker, &EngineWorker::replyFinished, this, [this](const ReplyFinished& r) {
    if (ChatSession* s = session(r.chat)) s->finishReply(r);
    emit replyFinished(r);
  });
}

void ChatController::setModel(const ModelInfo& info) {
  const SamplingSettings was =
      defaultSamplingSettings(model_ ? model_->sampling_defaults : SamplingDefaults{});
  for (const auto& [id, s] : sessions_) {
    if (s->items().isEmpty() && sameSampling(s->sampling(), was)) {
      s->setSampling(defaultSamplingSettings(info.sampling_defaults));
    }
  }
  model_ = info;
  update_chat_note();
}

void ChatController::clearModel() {
  model_.reset();
}

ChatSession* ChatController::newChat() {
  const ChatId id = next_chat_++;
  auto* s = new ChatSession(id, tr("Chat %1").arg(id), this);
  // Sampling as the loaded model's authors advise (its generation_config.json), else KVScope's.
  s->setSampling(defaultSamplingSettings(model_ ? model_->sampling_defaults : SamplingDefaults{}));
  if (ChatSession* current = currentSession()) s->setSystemPrompt(current->systemPrompt());
  adopt(s);
  selectChat(id);
  return s;
}

// A chat joins the list: the sidebar shows it, and every change is saved.
void ChatController::adopt(ChatSession* s) {
  const ChatId id = s->id();
  sessions_[id] = s;
  emit sessionAdded(s);
  connect(s, &ChatSession::contextUsedChanged, this, [this, id] {
    if (id == current_) emit contextUsedChanged();
  });
  connect(s, &ChatSession::titleChanged, this, &ChatController::chatNamesChanged);
  connect(s, &ChatSession::contentChanged, this, [this, s] { save_chat(s); });
  emit chatNamesChanged();
}

void ChatController::restore(const QString& path, QStringList* problems) {
  if (path.isEmpty()) return;
  QString error;
  store_ = ChatStore::open(path, &error);
  if (!store_) {
    problems->push_back(tr("Chats are not being saved: %1").arg(error));
    return;
  }
  if (store_->readOnly()) {
    problems->push_back(tr("The saved chats are listed read-only, and new chats and replies are "
                           "not saved: %1 (%2)")
                            .arg(store_->readOnlyReason(), path));
  }
  for (ChatSession* s : store_->load(this, problems)) adopt(s);
  // Past every row, chats it could not read included: a new chat never takes their ids.
  next_chat_ = std::max(next_chat_, store_->next_id());
}

// Chats with nothing in them are not written until they have a message.
void ChatController::save_chat(ChatSession* s) {
  if (!store_ || store_->readOnly()) return;  // restore() said so once
  if (s->items().isEmpty() && !store_->contains(s->id())) return;
  QString error;
  if (!store_->save(*s, &error)) emit problem(tr("The chat could not be saved: %1").arg(error));
}

QList<ChatSession*> ChatController::sessions() const {
  QList<ChatSession*> all;
  for (const auto& [id, s] : sessions_) all.push_back(s);
  return all;
}

int ChatController::replyingChats() const {
  int writing = 0;
  for (const auto& [id, s] : sessions_) writing += s->generating() ? 1 : 0;
  return writing;
}

std::map<ChatId, QString> ChatController::chatNames() const {
  std::map<ChatId, QString> names;
  for (const auto& [id, s] : sessions_) names[id] = s->title();
  return names;
}

// The loaded model as a chat records it: its file's size and time, so a chat opened later
// can tell a different or a rewritten file.
ModelRef ChatController::model_ref() const {
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

void ChatController::update_chat_note() {
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
  emit chatNoteChanged(note);
}

ChatSession* ChatController::session(ChatId chat) const {
  auto it = sessions_.find(chat);
  return it != sessions_.end() ? it->second : nullptr;
}

void ChatController::selectChat(ChatId chat) {
  if (chat == current_ || !session(chat)) return;
  current_ = chat;
  emit currentChanged(session(chat));
  update_chat_note();
}

// A chat that is generating is stopped first; its sequence's blocks are freed by the
// engine when the cancellation lands. The saved copy goes at once; the session itself is
// kept while Undo is offered, which saves it again.
void ChatController::deleteChat(ChatId chat) {
  ChatSession* s = session(chat);
  if (!s) return;
  engine_->forget(chat);  // stops its reply and releases the cache it kept
  disconnect(s, nullptr, this, nullptr);
  if (s->generating()) s->finishReply({chat, FinishReason::Cancelled, {}, 0, 0});
  sessions_.erase(chat);
  emit sessionRemoved(chat);
  QString error;
  if (store_ && store_->contains(chat) && !store_->remove(chat, &error)) {
    emit problem(tr("The chat could not be deleted from the saved chats: %1").arg(error));
  }
  finishDelete();  // the one deleted before can no longer come back
  if (!s->items().isEmpty()) {
    deleted_ = s;
    emit deleteUndoable(s->title());
  } else {
    s->deleteLater();
  }
  if (chat == current_) current_ = 0;
  if (sessions_.empty()) newChat();
  if (current_ == 0) {
    selectChat(sessions_.begin()->first);
  }
  emit chatNamesChanged();
}

void ChatController::undoDelete() {
  if (!deleted_) return;
  ChatSession* s = std::exchange(deleted_, nullptr);
  emit deleteUndone();
  adopt(s);
  save_chat(s);
  selectChat(s->id());
}

void ChatController::finishDelete() {
  if (deleted_) std::exchange(deleted_, nullptr)->deleteLater();
}

void ChatController::renameChat(ChatId chat, const QString& title) {
  if (ChatSession* s = session(chat)) s->setTitle(title);
}

void ChatController::sendMessage(const QString& text) {
  ChatSession* s = currentSession();
  if (!s || s->generating() || !model_) return;
  s->setModel(model_ref());
  update_chat_note();
  engine_->submit(s->beginUserTurn(text));
}

// A new reply from the same prompt (with a new seed). See the issue note: sharing the
// prompt's blocks with the previous reply needs an engine fork-from-prompt.
void ChatController::regenerate() {
  ChatSession* s = currentSession();
  if (!s || !model_ || s->generating()) return;
  s->setModel(model_ref());
  update_chat_note();
  if (auto request = s->beginRegenerate()) engine_->submit(*request);
}

void ChatController::stopCurrent() {
  if (ChatSession* s = currentSession(); s && s->generating()) engine_->stop(s->id());
}

}  // namespace kvscope::ui
