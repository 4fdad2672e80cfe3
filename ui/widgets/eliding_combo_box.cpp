#include "widgets/eliding_combo_box.h"

#include <QHelpEvent>
#include <QStyleOptionComboBox>
#include <QStylePainter>
#include <QToolTip>

namespace kvscope::ui {

ElidingComboBox::ElidingComboBox(QWidget* parent) : QComboBox(parent) {}

QString ElidingComboBox::shownText() const {
  if (isEditable()) return currentText();  // the line edit shows it, scrolled
  QStyleOptionComboBox option;
  initStyleOption(&option);
  const QRect field =
      style()->subControlRect(QStyle::CC_ComboBox, &option, QStyle::SC_ComboBoxEditField, this);
  return fontMetrics().elidedText(currentText(), Qt::ElideRight, field.width());
}

QString ElidingComboBox::hoverText() const {
  if (shownText() == currentText()) return toolTip();
  return toolTip().isEmpty() ? currentText() : currentText() + QStringLiteral("\n\n") + toolTip();
}

// QComboBox's own painting with the label's text elided.
void ElidingComboBox::paintEvent(QPaintEvent* event) {
  if (isEditable()) {
    QComboBox::paintEvent(event);
    return;
  }
  QStylePainter painter(this);
  painter.setPen(palette().color(QPalette::Text));
  QStyleOptionComboBox option;
  initStyleOption(&option);
  painter.drawComplexControl(QStyle::CC_ComboBox, option);
  option.currentText = shownText();
  painter.drawControl(QStyle::CE_ComboBoxLabel, option);
}

bool ElidingComboBox::event(QEvent* event) {
  if (event->type() == QEvent::ToolTip && shownText() != currentText()) {
    QToolTip::showText(static_cast<QHelpEvent*>(event)->globalPos(), hoverText(), this);
    return true;
  }
  return QComboBox::event(event);
}

}  // namespace kvscope::ui
