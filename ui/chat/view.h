// ChatView: renders a ChatSession as a document, each message's text as Markdown. While a
// reply streams only that last message is re-rendered (at most every 80 ms), and the view
// follows the end unless the user has scrolled up.
#pragma once

#include <QPointer>
#include <QTextBrowser>
#include <QTimer>

namespace kvscope::ui {

class ChatSession;
struct ChatItem;

class ChatView : public QTextBrowser {
  Q_OBJECT

 public:
  explicit ChatView(QWidget* parent = nullptr);

  void setSession(ChatSession* session);
  // Renders streamed text that is waiting for the next repaint tick now (screenshots).
  void flush();

 protected:
  void changeEvent(QEvent* event) override;

 private:
  void render_all();
  void render_last();
  void insert_item(QTextCursor& cursor, const ChatItem& item);
  void scroll_if_following(bool was_at_end);
  bool at_end() const;

  QPointer<ChatSession> session_;
  int last_item_start_ = 0;  // document position where the last message begins
  QTimer last_item_timer_;
};

}  // namespace kvscope::ui
