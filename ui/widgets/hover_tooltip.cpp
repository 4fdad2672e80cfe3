#include "widgets/hover_tooltip.h"

#include <QHelpEvent>
#include <QToolTip>

namespace kvscope::ui {

bool handle_hover_tooltip(QWidget* widget, QEvent* event,
                          const std::function<QString(const QPoint&)>& describe) {
  if (event->type() != QEvent::ToolTip) return false;
  auto* help = static_cast<QHelpEvent*>(event);
  const QString text = describe(help->pos());
  if (text.isEmpty()) {
    QToolTip::hideText();
  } else {
    QToolTip::showText(help->globalPos(), text, widget);
  }
  return true;
}

}  // namespace kvscope::ui
