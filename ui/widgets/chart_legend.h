// ChartLegend: a wrapping legend under a chart ("■ weights 9.6 MiB  ■ KV in use ..."). The
// charts are small beside the chat, where Qt Charts' own legend would elide every name.
#pragma once

#include <QColor>
#include <QLabel>
#include <QVector>

class QChartView;
class QVBoxLayout;

namespace kvscope::ui {

struct LegendEntry {
  QColor color;
  QString text;
  bool line = false;  // a line sample (—) instead of a filled square
};

class ChartLegend : public QLabel {
  Q_OBJECT

 public:
  explicit ChartLegend(QWidget* parent = nullptr);

  // Rebuilds the text only when the entries changed.
  void setEntries(const QVector<LegendEntry>& entries);
};

// The panel's chart layout: `view` (setup_chart_view, Qt's own legend hidden since `legend`
// replaces it) over `legend`, in a new margin-free layout of `owner`, returned for widgets
// that add more rows.
QVBoxLayout* chart_over_legend(QWidget* owner, QChartView* view, ChartLegend* legend);

}  // namespace kvscope::ui
