// Tooltips for custom-painted widgets that describe what is under the mouse (a block, a
// span of slots): one QEvent::ToolTip handler for all of them.
#pragma once

#include <QEvent>
#include <QPoint>
#include <QString>
#include <QWidget>

#include <functional>

namespace kvscope::ui {

// For a ToolTip event: shows describe(position) (hides the tooltip when it is empty) and
// returns true. Any other event: returns false, for the widget's own handling.
bool handle_hover_tooltip(QWidget* widget, QEvent* event,
                          const std::function<QString(const QPoint&)>& describe);

}  // namespace kvscope::ui
