// ChartLegend: a wrapping legend under a chart ("■ weights 9.6 MiB  ■ KV in use ..."). The
// charts are small beside the chat, where Qt Charts' own legend would elide every name.
#pragma once

#include <QColor>
#include <QLabel>
#include <QVector>

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

}  // namespace kvscope::ui
