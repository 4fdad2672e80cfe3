#include "chat/view.h"

#include <QDesktopServices>
#include <QEvent>
#include <QImage>
#include <QMessageBox>
#include <QScrollBar>
#include <QTextBlock>
#include <QTextCursor>
#include <QTextFrame>

#include "chat/session.h"
#include "chat/thinking.h"

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

// A "Thinking" header is a link to this scheme, the message index as its path; the view
// handles it itself.
const QLatin1String kThinkingScheme("kvscope-thinking");

const QString kStreamingMark = QStringLiteral(" \u258d");

const QTextDocument::MarkdownFeatures kMarkdown(QTextDocument::MarkdownDialectGitHub |
                                                QTextDocument::MarkdownNoHTML);

// `a` moved a fraction `t` of the way to `b`.
QColor blend(const QColor& a, const QColor& b, double t) {
  return QColor::fromRgbF(static_cast<float>(a.redF() + (b.redF() - a.redF()) * t),
                          static_cast<float>(a.greenF() + (b.greenF() - a.greenF()) * t),
                          static_cast<float>(a.blueF() + (b.blueF() - a.blueF()) * t));
}

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

bool ChatView::thinkingExpanded(qsizetype item) const {
  return expanded_thinking_.count(thinking_key(item)) > 0;
}

ChatView::ThinkingKey ChatView::thinking_key(qsizetype item) const {
  const ChatSession* s = session_.data();
  if (s == nullptr || item < 0 || item >= s->items().size()) return {0, -1, 0};
  return {s->id(), item, s->items()[item].created_ms};
}

void ChatView::open_link(const QUrl& url) {
  if (url.scheme() == kThinkingScheme) {
    toggle_thinking(url.path().toLongLong());
    return;
  }
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
  render_document();
  scroll_if_following(true);
}

// Opening or closing a section keeps the view where it is: the header stays under the mouse.
void ChatView::toggle_thinking(qsizetype item) {
  const ThinkingKey key = thinking_key(item);
  if (std::get<1>(key) < 0) return;
  if (expanded_thinking_.erase(key) == 0) expanded_thinking_.insert(key);
  const int value = verticalScrollBar()->value();
  render_document();
  verticalScrollBar()->setValue(value);
}

void ChatView::render_document() {
  last_item_timer_.stop();
  clear();
  last_item_start_ = 0;
  const ChatSession* s = session_.data();
  if (s == nullptr) return;
  QTextCursor cursor(document());
  const auto& items = s->items();
  for (qsizetype i = 0; i < items.size(); ++i) {
    if (i + 1 == items.size()) last_item_start_ = cursor.position();
    insert_item(cursor, i, items[i]);
  }
}

void ChatView::render_last() {
  const ChatSession* s = session_.data();
  if (s == nullptr || s->items().isEmpty()) return;
  const bool was_at_end = at_end();
  QTextCursor cursor(document());
  cursor.setPosition(last_item_start_);
  cursor.movePosition(QTextCursor::End, QTextCursor::KeepAnchor);
  cursor.removeSelectedText();
  insert_item(cursor, s->items().size() - 1, s->items().constLast());
  scroll_if_following(was_at_end);
}

// A header line ("You" / "Assistant", in the highlight colour), a reply's "Thinking" section
// when it has one, then the text as Markdown, then a note in the placeholder colour when the
// reply ended early.
void ChatView::insert_item(QTextCursor& cursor, qsizetype index, const ChatItem& item) {
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
  const bool streaming = item.state == ChatItem::State::Streaming;
  ReplyThinking reply;
  if (user) {
    reply.answer = item.text;
  } else {
    reply = split_thinking(item.text);
  }
  const bool open = reply.section == ReplyThinking::Section::Open;
  if (reply.shown()) insert_thinking(cursor, index, reply.reasoning, open, streaming);
  QString text = reply.answer;
  if (streaming && !open) text += kStreamingMark;
  // GitHub Markdown without raw HTML: an <img> or <a> tag in a reply is shown as text
  if (!text.isEmpty()) cursor.insertMarkdown(text, kMarkdown);
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

// "▶ Thinking" (a link that opens and closes the section; "Thinking…" while the model is
// still in it), and when open, the reasoning as Markdown in a shaded box, in a softer colour
// than the answer. Leaves the cursor in an empty block after the section.
void ChatView::insert_thinking(QTextCursor& cursor, qsizetype index, const QString& reasoning,
                               bool open, bool streaming) {
  const bool expanded = thinkingExpanded(index);
  QTextCharFormat toggle;
  toggle.setAnchor(true);
  toggle.setAnchorHref(QStringLiteral("%1:%2").arg(kThinkingScheme).arg(index));
  toggle.setForeground(palette().color(QPalette::PlaceholderText));
  toggle.setFontWeight(QFont::DemiBold);
  toggle.setToolTip(expanded ? tr("Hide the model's reasoning") : tr("Show the model's reasoning"));
  QTextBlockFormat toggle_block;
  toggle_block.setBottomMargin(4);
  cursor.setBlockFormat(toggle_block);
  const QString arrow = expanded ? QStringLiteral("\u25bc ") : QStringLiteral("\u25b6 ");
  cursor.insertText(arrow + (open && streaming ? tr("Thinking\u2026") : tr("Thinking")), toggle);
  if (!expanded) {
    cursor.insertBlock(QTextBlockFormat(), QTextCharFormat());
    return;
  }
  QTextFrameFormat box;
  box.setBackground(palette().color(QPalette::AlternateBase));
  box.setBorder(0);
  box.setPadding(8);
  box.setBottomMargin(8);
  QTextFrame* frame = cursor.insertFrame(box);
  const int start = cursor.position();
  const QString text = reasoning + (open && streaming ? kStreamingMark : QString());
  if (!text.isEmpty()) cursor.insertMarkdown(text, kMarkdown);
  cursor.setPosition(start, QTextCursor::KeepAnchor);
  QTextCharFormat soft;
  soft.setForeground(blend(palette().color(QPalette::Text), palette().color(QPalette::Base), 0.3));
  cursor.mergeCharFormat(soft);
  cursor.setPosition(frame->lastPosition());
  cursor.movePosition(QTextCursor::NextBlock);
  cursor.setBlockFormat(QTextBlockFormat());
  cursor.setCharFormat(QTextCharFormat());
}

bool ChatView::at_end() const {
  const QScrollBar* bar = verticalScrollBar();
  return bar->value() >= bar->maximum() - 4;
}

void ChatView::scroll_if_following(bool was_at_end) {
  if (was_at_end) verticalScrollBar()->setValue(verticalScrollBar()->maximum());
}

}  // namespace kvscope::ui
