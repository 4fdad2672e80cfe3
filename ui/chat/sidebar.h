// ChatSidebar: the list of chats (each its own sequence in the one engine), with the chat's
// colour as in the block map and a mark on the ones generating. Above it a search box keeps
// the chats whose title or messages hold the text; a chat is renamed in place (double-click,
// F2 or its context menu). After a delete, an Undo button stays for a few seconds. A saved
// chat this version cannot read is listed greyed, with the reason, and can only be exported
// (its rows as stored); under the list a line says when the saved chats are read-only.
#pragma once

#include <QWidget>

#include "worker/engine_messages.h"

class QLabel;
class QLineEdit;
class QListWidget;
class QListWidgetItem;
class QPushButton;
class QTimer;

namespace kvscope::ui {

class ChatSession;

class ChatSidebar : public QWidget {
  Q_OBJECT

 public:
  // How long the Undo button of a delete stays.
  static constexpr int kUndoMs = 8000;

  explicit ChatSidebar(QWidget* parent = nullptr);

  void addSession(ChatSession* session);
  // A saved chat that could not be read: greyed, not selectable, `reason` in its tooltip.
  void addUnreadable(ChatId chat, const QString& title, const QString& reason);
  // "" hides the line.
  void setReadOnlyNote(const QString& note);
  bool isUnreadable(ChatId chat) const;
  void removeSession(ChatId chat);
  void setCurrent(ChatId chat);
  ChatId current() const;
  // Chats the search shows, top to bottom.
  QList<ChatId> visibleChats() const;
  void setSearchText(const QString& text);
  // Starts editing the chat's title in the list.
  void editTitle(ChatId chat);
  // Shows "Undo delete" for kUndoMs; undoDeleteRequested or undoExpired follows.
  void offerUndo(const QString& title);
  void hideUndo();

  QListWidget* list() const { return list_; }
  QPushButton* undoButton() const { return undo_; }
  QLabel* readOnlyLabel() const { return read_only_; }

 signals:
  void currentChanged(kvscope::ui::ChatId chat);
  void newChatRequested();
  void deleteChatRequested(kvscope::ui::ChatId chat);
  void renameRequested(kvscope::ui::ChatId chat, const QString& title);
  void exportRequested(kvscope::ui::ChatId chat, bool json);  // else Markdown
  void exportUnreadableRequested(kvscope::ui::ChatId chat);   // its rows as stored, as JSON
  void undoDeleteRequested();
  void undoExpired();

 private:
  QListWidgetItem* item_of(ChatId chat) const;
  ChatSession* session_of(ChatId chat) const;
  void refresh(ChatSession* session);
  void apply_search();
  void show_menu(const QPoint& pos);

  QLineEdit* search_;
  QListWidget* list_;
  QPushButton* new_chat_;
  QPushButton* delete_chat_;
  QPushButton* undo_;
  QLabel* read_only_;
  QTimer* undo_timer_;
  QList<ChatSession*> sessions_;
  bool refreshing_ = false;  // itemChanged from our own setText is no rename
};

}  // namespace kvscope::ui
