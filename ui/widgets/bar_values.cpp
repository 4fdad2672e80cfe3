#include "widgets/bar_values.h"

#include <QBarSet>

namespace kvscope::ui {

void set_bar_values(QBarSet* set, const QList<qreal>& values) {
  if (set->count() == values.size()) {
    for (qsizetype i = 0; i < values.size(); ++i) {
      if (set->at(i) != values[i]) set->replace(i, values[i]);
    }
    return;
  }
  if (set->count() > 0) set->remove(0, set->count());
  set->append(values);
}

}  // namespace kvscope::ui
