#include "chat/view.h"

#include <QEvent>
#include <QScrollBar>
#include <QTextBlock>
#include <QTextCursor>

#include "chat/session.h"

namespace kvscope::ui {

ChatView::ChatView(QWidget* parent) : QTextBrowser(parent) {
  setOpenExternalLinks(true);
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
  if (!text.isEmpty()) cursor.insertMarkdown(text);
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
