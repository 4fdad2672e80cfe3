#include "chat/sidebar.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMenu>
#include <QPainter>
#include <QPixmap>
#include <QPushButton>
#include <QStyle>
#include <QTimer>
#include <QVBoxLayout>

#include "chat/colors.h"
#include "chat/session.h"

namespace kvscope::ui {
namespace {

constexpr int kChatRole = Qt::UserRole + 1;
constexpr int kUnreadableRole = Qt::UserRole + 2;

QIcon dot_icon(const QColor& color, bool hollow) {
  QPixmap pixmap(14, 14);
  pixmap.fill(Qt::transparent);
  QPainter p(&pixmap);
  p.setRenderHint(QPainter::Antialiasing);
  p.setPen(QPen(color, 2));
  p.setBrush(hollow ? Qt::NoBrush : QBrush(color));
  p.drawEllipse(QRectF(2, 2, 10, 10));
  return QIcon(pixmap);
}

bool matches(const ChatSession& s, const QString& needle) {
  if (needle.isEmpty() || s.title().contains(needle, Qt::CaseInsensitive)) return true;
  for (const ChatItem& item : s.items()) {
    if (item.text.contains(needle, Qt::CaseInsensitive)) return true;
  }
  return false;
}

}  // namespace

ChatSidebar::ChatSidebar(QWidget* parent)
    : QWidget(parent),
      search_(new QLineEdit(this)),
      list_(new QListWidget(this)),
      new_chat_(new QPushButton(tr("New chat"), this)),
      delete_chat_(new QPushButton(tr("Delete"), this)),
      undo_(new QPushButton(this)),
      read_only_(new QLabel(this)),
      undo_timer_(new QTimer(this)) {
  new_chat_->setToolTip(tr("Start another conversation: a new sequence in the same engine"));
  search_->setPlaceholderText(tr("Search chats"));
  search_->setClearButtonEnabled(true);
  undo_->setVisible(false);
  undo_timer_->setSingleShot(true);
  undo_timer_->setInterval(kUndoMs);
  auto* buttons = new QHBoxLayout;
  buttons->addWidget(new_chat_, 1);
  buttons->addWidget(delete_chat_);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addLayout(buttons);
  layout->addWidget(search_);
  layout->addWidget(list_, 1);
  layout->addWidget(read_only_);
  layout->addWidget(undo_);
  read_only_->setWordWrap(true);
  read_only_->setVisible(false);
  read_only_->setForegroundRole(QPalette::PlaceholderText);
  list_->setTextElideMode(Qt::ElideRight);
  list_->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  list_->setEditTriggers(QAbstractItemView::DoubleClicked | QAbstractItemView::EditKeyPressed);
  list_->setContextMenuPolicy(Qt::CustomContextMenu);

  connect(new_chat_, &QPushButton::clicked, this, &ChatSidebar::newChatRequested);
  connect(delete_chat_, &QPushButton::clicked, this, [this] {
    if (list_->currentItem()) emit deleteChatRequested(current());
  });
  connect(list_, &QListWidget::currentItemChanged, this, [this](QListWidgetItem* item) {
    if (item) emit currentChanged(item->data(kChatRole).toLongLong());
  });
  connect(list_, &QListWidget::itemChanged, this, [this](QListWidgetItem* item) {
    if (refreshing_) return;
    const ChatId chat = item->data(kChatRole).toLongLong();
    ChatSession* s = session_of(chat);
    if (!s || item->text() == s->title()) return;  // not an edit of the title
    if (item->text().simplified().isEmpty()) {     // an empty title is no title: put it back
      refresh(s);
      return;
    }
    emit renameRequested(chat, item->text());
  });
  connect(list_, &QWidget::customContextMenuRequested, this, &ChatSidebar::show_menu);
  connect(search_, &QLineEdit::textChanged, this, &ChatSidebar::apply_search);
  connect(undo_, &QPushButton::clicked, this, [this] {
    hideUndo();
    emit undoDeleteRequested();
  });
  connect(undo_timer_, &QTimer::timeout, this, [this] {
    undo_->setVisible(false);
    emit undoExpired();
  });
}

void ChatSidebar::addSession(ChatSession* session) {
  sessions_.push_back(session);
  refreshing_ = true;
  auto* item = new QListWidgetItem(list_);
  item->setData(kChatRole, session->id());
  item->setFlags(item->flags() | Qt::ItemIsEditable);
  refreshing_ = false;
  refresh(session);
  connect(session, &ChatSession::titleChanged, this, [this, session] { refresh(session); });
  connect(session, &ChatSession::generatingChanged, this, [this, session] { refresh(session); });
  connect(session, &ChatSession::itemsReset, this, &ChatSidebar::apply_search);
  apply_search();
}

void ChatSidebar::addUnreadable(ChatId chat, const QString& title, const QString& reason) {
  refreshing_ = true;
  auto* item = new QListWidgetItem(list_);
  item->setData(kChatRole, chat);
  item->setData(kUnreadableRole, true);
  item->setFlags(Qt::ItemIsEnabled);  // not selectable, not editable: it cannot be opened
  item->setText(title.isEmpty() ? tr("Chat %1").arg(chat) : title);
  item->setForeground(palette().brush(QPalette::Disabled, QPalette::Text));
  item->setIcon(style()->standardIcon(QStyle::SP_MessageBoxWarning));
  item->setToolTip(tr("This version of KVScope cannot open this chat: %1.\nIt is kept as it is; "
                      "its context menu exports it as JSON.")
                       .arg(reason));
  refreshing_ = false;
}

void ChatSidebar::setReadOnlyNote(const QString& note) {
  read_only_->setText(note);
  read_only_->setToolTip(note);
  read_only_->setVisible(!note.isEmpty());
}

bool ChatSidebar::isUnreadable(ChatId chat) const {
  const QListWidgetItem* item = item_of(chat);
  return item && item->data(kUnreadableRole).toBool();
}

void ChatSidebar::removeSession(ChatId chat) {
  if (ChatSession* s = session_of(chat)) {
    disconnect(s, nullptr, this, nullptr);
    sessions_.removeAll(s);
  }
  delete item_of(chat);
}

void ChatSidebar::setCurrent(ChatId chat) {
  if (QListWidgetItem* item = item_of(chat)) list_->setCurrentItem(item);
}

ChatId ChatSidebar::current() const {
  return list_->currentItem() ? list_->currentItem()->data(kChatRole).toLongLong() : 0;
}

QList<ChatId> ChatSidebar::visibleChats() const {
  QList<ChatId> chats;
  for (int i = 0; i < list_->count(); ++i) {
    if (!list_->item(i)->isHidden()) chats.push_back(list_->item(i)->data(kChatRole).toLongLong());
  }
  return chats;
}

void ChatSidebar::setSearchText(const QString& text) {
  search_->setText(text);
}

void ChatSidebar::editTitle(ChatId chat) {
  if (QListWidgetItem* item = item_of(chat)) list_->editItem(item);
}

void ChatSidebar::offerUndo(const QString& title) {
  const QString shown = fontMetrics().elidedText(title, Qt::ElideRight, 140);
  undo_->setText(tr("Undo delete of \u201c%1\u201d").arg(shown));
  undo_->setToolTip(tr("Bring back the chat \u201c%1\u201d (for a few seconds)").arg(title));
  undo_->setVisible(true);
  undo_timer_->start();
}

void ChatSidebar::hideUndo() {
  undo_timer_->stop();
  undo_->setVisible(false);
}

QListWidgetItem* ChatSidebar::item_of(ChatId chat) const {
  for (int i = 0; i < list_->count(); ++i) {
    if (list_->item(i)->data(kChatRole).toLongLong() == chat) return list_->item(i);
  }
  return nullptr;
}

ChatSession* ChatSidebar::session_of(ChatId chat) const {
  for (ChatSession* s : sessions_) {
    if (s->id() == chat) return s;
  }
  return nullptr;
}

// A filled dot in the chat's colour; hollow while it generates.
void ChatSidebar::refresh(ChatSession* session) {
  QListWidgetItem* item = item_of(session->id());
  if (!item) return;
  refreshing_ = true;
  item->setText(session->title());
  item->setToolTip(session->generating() ? tr("%1 (generating)").arg(session->title())
                                         : session->title());
  item->setIcon(dot_icon(chat_color(session->id()), session->generating()));
  refreshing_ = false;
}

// The current chat stays listed whatever the search, so the chat on screen is never hidden.
void ChatSidebar::apply_search() {
  const QString needle = search_->text().trimmed();
  for (ChatSession* s : sessions_) {
    if (QListWidgetItem* item = item_of(s->id())) {
      item->setHidden(!matches(*s, needle) && item != list_->currentItem());
    }
  }
}

void ChatSidebar::show_menu(const QPoint& pos) {
  QListWidgetItem* item = list_->itemAt(pos);
  if (!item) return;
  const ChatId chat = item->data(kChatRole).toLongLong();
  QMenu menu(this);
  if (item->data(kUnreadableRole).toBool()) {
    menu.addAction(tr("Export as stored (JSON)\u2026"), this,
                   [this, chat] { emit exportUnreadableRequested(chat); });
    menu.exec(list_->viewport()->mapToGlobal(pos));
    return;
  }
  menu.addAction(tr("Rename"), this, [this, item] { list_->editItem(item); });
  menu.addAction(tr("Export as Markdown\u2026"), this,
                 [this, chat] { emit exportRequested(chat, false); });
  menu.addAction(tr("Export as JSON\u2026"), this,
                 [this, chat] { emit exportRequested(chat, true); });
  menu.addSeparator();
  menu.addAction(tr("Delete"), this, [this, chat] { emit deleteChatRequested(chat); });
  menu.exec(list_->viewport()->mapToGlobal(pos));
}

}  // namespace kvscope::ui
