#include "widgets/number_text.h"

#include "plan/units.h"

namespace kvscope::ui {

QString bytes_text(std::int64_t bytes) {
  return QString::fromStdString(human_bytes(bytes));
}

QString count_text(std::int64_t count) {
  return QString::fromStdString(group_digits(count));
}

}  // namespace kvscope::ui
