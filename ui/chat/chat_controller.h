// ChatController: the chats' logic, without their widgets. It holds the chat sessions (which
// is current, new ones, deleting with undo, renaming), saves them in the ChatStore, sends the
// current chat's requests to the engine (send, regenerate, stop; a deleted chat's cache is
// let go) and routes the worker's replies to their sessions. The main window lays out the
// sidebar and the chat panel and wires them to it; tests and drivers drive the chats here.
#pragma once

#include <QList>
#include <QObject>
#include <QString>
#include <QStringList>

#include <map>
#include <memory>
#include <optional>

#include "worker/engine_messages.h"

namespace kvscope::ui {

class ChatSession;
class ChatStore;
class EngineController;
struct ModelRef;

class ChatController : public QObject {
  Q_OBJECT

 public:
  // Requests go to `engine`; its worker's replies come back to the sessions.
  explicit ChatController(EngineController* engine, QObject* parent = nullptr);
  ~ChatController() override;

  // The saved chats at `path` come back (listed, not loaded into the engine: continuing one
  // reads its conversation into the cache again). "": chats are not saved. A store that
  // cannot be opened leaves the chats unsaved, and says why in `problems`.
  void restore(const QString& path, QStringList* problems);
  // The model loaded now: chats not begun whose sampling is still the previous model's
  // default take this model's.
  void setModel(const ModelInfo& info);
  void clearModel();  // the load failed: no model
  const std::optional<ModelInfo>& model() const { return model_; }

  // Adds a chat (the current chat's system prompt; the loaded model's sampling defaults) and
  // makes it the current one.
  ChatSession* newChat();
  // Sends `text` in the current chat, as if typed and sent.
  void sendMessage(const QString& text);
  void regenerate();
  void stopCurrent();
  void selectChat(ChatId chat);
  void deleteChat(ChatId chat);
  void undoDelete();
  void finishDelete();  // the chat deleted last can no longer come back
  void renameChat(ChatId chat, const QString& title);

  ChatSession* session(ChatId chat) const;
  ChatSession* currentSession() const { return session(current_); }
  ChatId currentChat() const { return current_; }
  // The chats (the one deleted last, while it can be undone, is not).
  QList<ChatSession*> sessions() const;
  ChatStore* store() const { return store_.get(); }  // nullptr: chats are not saved
  int replyingChats() const;                         // chats with a reply being written
  std::map<ChatId, QString> chatNames() const;

 signals:
  void sessionAdded(kvscope::ui::ChatSession* session);
  void sessionRemoved(kvscope::ui::ChatId chat);
  void currentChanged(kvscope::ui::ChatSession* session);
  void deleteUndoable(const QString& title);  // the deleted chat can come back for a while
  void deleteUndone();
  void chatNamesChanged();
  void contextUsedChanged();                       // of the current chat
  void chatNoteChanged(const QString& note);       // about the current chat's model
  void promptProgress(qint64 done, qint64 total);  // of the current chat's prompt
  void replyText(kvscope::ui::ChatId chat, qint64 generated_tokens);
  void replyFinished(const kvscope::ui::ReplyFinished& result);
  void problem(const QString& error);  // a chat could not be saved or deleted

 private:
  void connect_worker();
  void adopt(ChatSession* s);
  void save_chat(ChatSession* s);
  ModelRef model_ref() const;
  void update_chat_note();

  EngineController* engine_;
  std::optional<ModelInfo> model_;
  std::map<ChatId, ChatSession*> sessions_;
  std::unique_ptr<ChatStore> store_;
  ChatSession* deleted_ = nullptr;  // the chat deleted last, kept while Undo is offered
  ChatId next_chat_ = 1;
  ChatId current_ = 0;
};

}  // namespace kvscope::ui
