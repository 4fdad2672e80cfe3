// ChatSidebar: the list of chats (each its own sequence in the one engine), with the chat's
// colour as in the block map and a mark on the ones generating.
#pragma once

#include <QWidget>

#include "worker/engine_messages.h"

class QListWidget;
class QListWidgetItem;
class QPushButton;

namespace kvscope::ui {

class ChatSession;

class ChatSidebar : public QWidget {
  Q_OBJECT

 public:
  explicit ChatSidebar(QWidget* parent = nullptr);

  void addSession(ChatSession* session);
  void removeSession(ChatId chat);
  void setCurrent(ChatId chat);
  ChatId current() const;

 signals:
  void currentChanged(kvscope::ui::ChatId chat);
  void newChatRequested();
  void deleteChatRequested(kvscope::ui::ChatId chat);

 private:
  QListWidgetItem* item_of(ChatId chat) const;
  void refresh(ChatSession* session);

  QListWidget* list_;
  QPushButton* new_chat_;
  QPushButton* delete_chat_;
};

}  // namespace kvscope::ui
