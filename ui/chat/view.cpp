#include "chat/view.h"

#include <QDesktopServices>
#include <QEvent>
#include <QImage>
#include <QMessageBox>
#include <QScrollBar>
#include <QTextBlock>
#include <QTextCursor>

#include "chat/session.h"

namespace kvscope::ui {

namespace {

// A document that loads nothing: QTextDocument::loadResource reads any local file itself
// when the view returns nothing, so the view's override alone is not enough. The empty
// image it gives is drawn as the broken-image placeholder.
class UntrustedDocument : public QTextDocument {
 public:
  using QTextDocument::QTextDocument;

 protected:
  QVariant loadResource(int /*type*/, const QUrl& /*name*/) override {
    return QVariant::fromValue(QImage());
  }
};

}  // namespace

ChatView::ChatView(QWidget* parent) : QTextBrowser(parent) {
  setDocument(new UntrustedDocument(this));
  setOpenLinks(false);  // anchorClicked decides; QTextBrowser would load file: links itself
  setOpenExternalLinks(false);
  connect(this, &QTextBrowser::anchorClicked, this, &ChatView::open_link);
  confirm_link_ = [this](const QUrl& url) {
    const QString shown = url.toDisplayString().left(300).toHtmlEscaped();
    return QMessageBox::question(
               this, tr("Open link"),
               tr("Open this link from the chat in your browser?<br><br>%1").arg(shown)) ==
           QMessageBox::Yes;
  };
  open_link_ = [](const QUrl& url) { QDesktopServices::openUrl(url); };
  setFrameShape(QFrame::NoFrame);
  document()->setDocumentMargin(12);
  last_item_timer_.setSingleShot(true);
  last_item_timer_.setInterval(80);
  connect(&last_item_timer_, &QTimer::timeout, this, &ChatView::render_last);
}

void ChatView::setSession(ChatSession* session) {
  if (session_) disconnect(session_, nullptr, this, nullptr);
  session_ = session;
  if (session_) {
    connect(session_, &ChatSession::itemsReset, this, &ChatView::render_all);
    connect(session_, &ChatSession::lastItemChanged, this, [this] {
      if (!last_item_timer_.isActive()) last_item_timer_.start();
    });
  }
  render_all();
}

void ChatView::flush() {
  if (last_item_timer_.isActive()) {
    last_item_timer_.stop();
    render_last();
  }
}

bool ChatView::isWebLink(const QUrl& url) {
  const QString scheme = url.scheme().toLower();
  return url.isValid() && (scheme == QLatin1String("http") || scheme == QLatin1String("https")) &&
         !url.host().isEmpty();
}

void ChatView::setLinkHandlers(std::function<bool(const QUrl&)> confirm,
                               std::function<void(const QUrl&)> open) {
  confirm_link_ = std::move(confirm);
  open_link_ = std::move(open);
}

QVariant ChatView::loadResource(int /*type*/, const QUrl& /*name*/) {
  return QVariant::fromValue(QImage());
}

void ChatView::open_link(const QUrl& url) {
  if (!isWebLink(url)) {
    emit linkRefused(url);
    return;
  }
  if (confirm_link_ && confirm_link_(url) && open_link_) open_link_(url);
}

void ChatView::changeEvent(QEvent* event) {
  QTextBrowser::changeEvent(event);
  if (event->type() == QEvent::PaletteChange) render_all();  // header colours follow it
}

void ChatView::render_all() {
  last_item_timer_.stop();
  clear();
  last_item_start_ = 0;
  const ChatSession* s = session_.data();
  if (s == nullptr) return;
  QTextCursor cursor(document());
  const auto& items = s->items();
  for (qsizetype i = 0; i < items.size(); ++i) {
    if (i + 1 == items.size()) last_item_start_ = cursor.position();
    insert_item(cursor, items[i]);
  }
  scroll_if_following(true);
}

void ChatView::render_last() {
  const ChatSession* s = session_.data();
  if (s == nullptr || s->items().isEmpty()) return;
  const bool was_at_end = at_end();
  QTextCursor cursor(document());
  cursor.setPosition(last_item_start_);
  cursor.movePosition(QTextCursor::End, QTextCursor::KeepAnchor);
  cursor.removeSelectedText();
  insert_item(cursor, s->items().constLast());
  scroll_if_following(was_at_end);
}

// A header line ("You" / "Assistant", in the highlight colour), then the text as Markdown,
// then a note in the placeholder colour when the reply ended early.
void ChatView::insert_item(QTextCursor& cursor, const ChatItem& item) {
  const bool user = item.role == QLatin1String("user");
  QTextBlockFormat header_block;
  header_block.setTopMargin(cursor.position() == 0 ? 0 : 14);
  header_block.setBottomMargin(2);
  QTextCharFormat header;
  header.setFontWeight(QFont::Bold);
  header.setForeground(palette().color(user ? QPalette::Link : QPalette::Text));
  if (cursor.position() == 0) {
    cursor.setBlockFormat(header_block);
    cursor.setCharFormat(header);
  } else {
    cursor.insertBlock(header_block, header);
  }
  cursor.insertText(user ? tr("You") : tr("Assistant"));
  cursor.insertBlock(QTextBlockFormat(), QTextCharFormat());
  QString text = item.text;
  if (item.state == ChatItem::State::Streaming) text += QStringLiteral(" \u258d");
  // GitHub Markdown without raw HTML: an <img> or <a> tag in a reply is shown as text
  if (!text.isEmpty()) {
    cursor.insertMarkdown(text,
                          QTextDocument::MarkdownFeatures(QTextDocument::MarkdownDialectGitHub |
                                                          QTextDocument::MarkdownNoHTML));
  }
  if (!item.note.isEmpty()) {
    QTextCharFormat note;
    note.setFontItalic(true);
    // A mid red reads on light and dark backgrounds alike.
    note.setForeground(item.state == ChatItem::State::Failed
                           ? QColor(0xd6, 0x45, 0x45)
                           : palette().color(QPalette::PlaceholderText));
    cursor.insertBlock(QTextBlockFormat(), note);
    cursor.insertText(QStringLiteral("\u2014 ") + item.note);
  }
}

bool ChatView::at_end() const {
  const QScrollBar* bar = verticalScrollBar();
  return bar->value() >= bar->maximum() - 4;
}

void ChatView::scroll_if_following(bool was_at_end) {
  if (was_at_end) verticalScrollBar()->setValue(verticalScrollBar()->maximum());
}

}  // namespace kvscope::ui
