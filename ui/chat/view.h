// ChatView: renders a ChatSession as a document, each message's text as Markdown. While a
// reply streams only that last message is re-rendered (at most every 80 ms), and the view
// follows the end unless the user has scrolled up. A reply that begins with <think> shows its
// reasoning in a "Thinking" section (thinking.h), collapsed until its header is clicked; the
// message itself keeps the tags, only the view leaves them out.
//
// Message text is untrusted (a model writes it): it is rendered without raw HTML, the view
// loads no resource at all (an image `![](/dev/zero)` made the GUI thread read forever, a
// remote one would call out), and a link opens only for http/https, in the browser, after
// the user confirms. A `file:` link no longer replaces the chat with a local file.
#pragma once

#include <QPointer>
#include <QTextBrowser>
#include <QTimer>
#include <QUrl>

#include <functional>
#include <set>
#include <tuple>

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

  // Whether a clicked link may be offered for opening: http and https with a host.
  static bool isWebLink(const QUrl& url);
  // What a click on a web link does: ask (default: a question box naming the URL), then open
  // (default: the desktop's browser). Tests replace both.
  void setLinkHandlers(std::function<bool(const QUrl&)> confirm,
                       std::function<void(const QUrl&)> open);

  // Whether message `item` of the session shows its reasoning (its "Thinking" header was
  // clicked open). Remembered per chat while the view lives; a regenerated reply starts closed.
  bool thinkingExpanded(qsizetype item) const;

  // Nothing is loaded (an empty image: the document draws its placeholder).
  QVariant loadResource(int type, const QUrl& name) override;

 signals:
  // A clicked link that is not a web link (file:, data:, relative ...): not followed.
  void linkRefused(const QUrl& url);

 protected:
  void changeEvent(QEvent* event) override;

 private:
  // An expanded "Thinking" section: chat, message index, the message's created_ms.
  using ThinkingKey = std::tuple<qint64, qsizetype, qint64>;

  void open_link(const QUrl& url);
  void render_all();
  void render_document();
  void render_last();
  void insert_item(QTextCursor& cursor, qsizetype index, const ChatItem& item);
  void insert_thinking(QTextCursor& cursor, qsizetype index, const QString& reasoning, bool open,
                       bool streaming);
  void toggle_thinking(qsizetype item);
  ThinkingKey thinking_key(qsizetype item) const;
  void scroll_if_following(bool was_at_end);
  bool at_end() const;

  QPointer<ChatSession> session_;
  int last_item_start_ = 0;  // document position where the last message begins
  QTimer last_item_timer_;
  std::function<bool(const QUrl&)> confirm_link_;
  std::function<void(const QUrl&)> open_link_;
  std::set<ThinkingKey> expanded_thinking_;
};

}  // namespace kvscope::ui
