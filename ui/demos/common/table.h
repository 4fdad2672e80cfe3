// The small figure tables of the GQA and KV quantization demo pages (one row per layout
// or dtype): read-only, no scrolling, headers of two lines, the page's own model row in
// bold; and the few number formats they share.
#pragma once

#include <QString>
#include <QStringList>

#include <cstdint>

#include "kv/format/kv_format.h"

class QTableWidget;
class QWidget;

namespace kvscope::ui {

// A read-only table of `rows` x `cols` without a vertical header: the first column as wide
// as its text, the others share the rest.
QTableWidget* make_figure_table(int rows, int cols, QWidget* parent);
// Sets row `row` to `cells` (missing cells empty), the first column left-aligned.
void set_figure_row(QTableWidget* table, int row, const QStringList& cells, bool bold = false);
// Fixes the height to the header and every row: the table never scrolls.
void fit_figure_table(QTableWidget* table);

// The longest context a budget holds, as kv_capacity() found it: "131,072", or "any
// (window 4,096)" / "≥ 1,073,741,824" when the planner's search hit its ceiling.
QString context_fits_text(std::int64_t tokens, bool at_planner_limit, std::int64_t window);
// "f16", "int8", "int4".
QString dtype_text(KvDtype dtype);
// A fraction as a percentage with three significant digits: 0.000283 -> "0.0283%".
QString percent_text(double fraction);

}  // namespace kvscope::ui
