#include "window/notice_bar.h"

#include <QEvent>
#include <QHBoxLayout>
#include <QLabel>
#include <QToolButton>

namespace kvscope::ui {

NoticeBar::NoticeBar(QWidget* parent)
    : QFrame(parent), label_(new QLabel(this)), close_(new QToolButton(this)) {
  setFrameShape(QFrame::StyledPanel);
  setAutoFillBackground(true);
  label_->setWordWrap(true);
  label_->setTextFormat(Qt::PlainText);
  label_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  close_->setText(QStringLiteral("\u2715"));
  close_->setToolTip(tr("Dismiss"));
  close_->setAutoRaise(true);
  auto* layout = new QHBoxLayout(this);
  layout->setContentsMargins(8, 4, 4, 4);
  layout->addWidget(label_, 1);
  layout->addWidget(close_, 0, Qt::AlignTop);
  connect(close_, &QToolButton::clicked, this, &QWidget::hide);
  hide();
}

void NoticeBar::showError(const QString& text) {
  show_message(text, true);
}

void NoticeBar::showInfo(const QString& text) {
  show_message(text, false);
}

QString NoticeBar::text() const {
  return isVisible() ? label_->text() : QString();
}

void NoticeBar::show_message(const QString& text, bool error) {
  error_ = error;
  label_->setText(text);
  restyle();
  show();
}

void NoticeBar::changeEvent(QEvent* event) {
  QFrame::changeEvent(event);
  if (event->type() == QEvent::PaletteChange) restyle();
}

// A tint of red (or of the highlight colour) over the window colour, so the text colour
// of either palette stays readable on it.
void NoticeBar::restyle() {
  QPalette pal = parentWidget() ? parentWidget()->palette() : palette();
  const QColor base = pal.color(QPalette::Window);
  const QColor tint = error_ ? QColor(0xd6, 0x45, 0x45) : pal.color(QPalette::Highlight);
  const auto mix = [&](int a, int b) { return (a * 3 + b) / 4; };
  pal.setColor(QPalette::Window,
               QColor(mix(base.red(), tint.red()), mix(base.green(), tint.green()),
                      mix(base.blue(), tint.blue())));
  setPalette(pal);
}

}  // namespace kvscope::ui
