#include "demos/common/table.h"

#include <QHeaderView>
#include <QTableWidget>

#include "widgets/number_text.h"

namespace kvscope::ui {

QTableWidget* make_figure_table(int rows, int cols, QWidget* parent) {
  auto* t = new QTableWidget(rows, cols, parent);
  t->verticalHeader()->hide();
  t->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
  t->horizontalHeader()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
  t->setWordWrap(false);
  t->setEditTriggers(QAbstractItemView::NoEditTriggers);
  t->setSelectionMode(QAbstractItemView::NoSelection);
  t->setFocusPolicy(Qt::NoFocus);
  t->setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  t->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  return t;
}

void set_figure_row(QTableWidget* table, int row, const QStringList& cells, bool bold) {
  for (int col = 0; col < table->columnCount(); ++col) {
    auto* item = new QTableWidgetItem(col < cells.size() ? cells[col] : QString());
    item->setTextAlignment(col == 0 ? Qt::AlignLeft | Qt::AlignVCenter : Qt::AlignCenter);
    QFont f = item->font();
    f.setBold(bold);
    item->setFont(f);
    table->setItem(row, col, item);
  }
}

void fit_figure_table(QTableWidget* table) {
  table->resizeRowsToContents();
  int h = table->horizontalHeader()->sizeHint().height() + 2 * table->frameWidth();
  for (int r = 0; r < table->rowCount(); ++r) h += table->rowHeight(r);
  table->setFixedHeight(h);
}

QString context_fits_text(std::int64_t tokens, bool at_planner_limit, std::int64_t window) {
  if (!at_planner_limit) return count_text(tokens);
  return window > 0 ? QObject::tr("any (window %1)").arg(count_text(window))
                    : QStringLiteral("\u2265 %1").arg(count_text(tokens));
}

QString dtype_text(KvDtype dtype) {
  const std::string_view n = kv_dtype_name(dtype);
  return QString::fromLatin1(n.data(), static_cast<qsizetype>(n.size()));
}

QString percent_text(double fraction) {
  return QStringLiteral("%1%").arg(100.0 * fraction, 0, 'g', 3);
}

}  // namespace kvscope::ui
