#include "chat/sidebar.h"

#include <QHBoxLayout>
#include <QListWidget>
#include <QPainter>
#include <QPixmap>
#include <QPushButton>
#include <QVBoxLayout>

#include "chat/colors.h"
#include "chat/session.h"

namespace kvscope::ui {
namespace {

constexpr int kChatRole = Qt::UserRole + 1;

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

}  // namespace

ChatSidebar::ChatSidebar(QWidget* parent)
    : QWidget(parent),
      list_(new QListWidget(this)),
      new_chat_(new QPushButton(tr("New chat"), this)),
      delete_chat_(new QPushButton(tr("Delete"), this)) {
  new_chat_->setToolTip(tr("Start another conversation: a new sequence in the same engine"));
  auto* buttons = new QHBoxLayout;
  buttons->addWidget(new_chat_, 1);
  buttons->addWidget(delete_chat_);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addLayout(buttons);
  layout->addWidget(list_, 1);
  list_->setTextElideMode(Qt::ElideRight);
  list_->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);

  connect(new_chat_, &QPushButton::clicked, this, &ChatSidebar::newChatRequested);
  connect(delete_chat_, &QPushButton::clicked, this, [this] {
    if (list_->currentItem()) emit deleteChatRequested(current());
  });
  connect(list_, &QListWidget::currentItemChanged, this, [this](QListWidgetItem* item) {
    if (item) emit currentChanged(item->data(kChatRole).toLongLong());
  });
}

void ChatSidebar::addSession(ChatSession* session) {
  auto* item = new QListWidgetItem(list_);
  item->setData(kChatRole, session->id());
  refresh(session);
  connect(session, &ChatSession::titleChanged, this, [this, session] { refresh(session); });
  connect(session, &ChatSession::generatingChanged, this, [this, session] { refresh(session); });
}

void ChatSidebar::removeSession(ChatId chat) {
  delete item_of(chat);
}

void ChatSidebar::setCurrent(ChatId chat) {
  if (QListWidgetItem* item = item_of(chat)) list_->setCurrentItem(item);
}

ChatId ChatSidebar::current() const {
  return list_->currentItem() ? list_->currentItem()->data(kChatRole).toLongLong() : 0;
}

QListWidgetItem* ChatSidebar::item_of(ChatId chat) const {
  for (int i = 0; i < list_->count(); ++i) {
    if (list_->item(i)->data(kChatRole).toLongLong() == chat) return list_->item(i);
  }
  return nullptr;
}

// A filled dot in the chat's colour; hollow while it generates.
void ChatSidebar::refresh(ChatSession* session) {
  QListWidgetItem* item = item_of(session->id());
  if (!item) return;
  item->setText(session->title());
  item->setToolTip(session->generating() ? tr("%1 (generating)").arg(session->title())
                                         : session->title());
  item->setIcon(dot_icon(chat_color(session->id()), session->generating()));
}

}  // namespace kvscope::ui
