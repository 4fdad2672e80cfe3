// A bar set's values replaced in place: QBarSet has no replace(list), and removing and
// appending every value on each frame would rebuild the bars (and their hover state) ten
// times a second.
#pragma once

#include <QList>

class QBarSet;

namespace kvscope::ui {

// Writes `values` into `set`: value by value where the count is unchanged (only those that
// differ), else cleared and appended.
void set_bar_values(QBarSet* set, const QList<qreal>& values);

}  // namespace kvscope::ui
