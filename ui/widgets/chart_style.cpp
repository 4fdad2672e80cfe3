#include "widgets/chart_style.h"

#include <QAbstractAxis>
#include <QChart>
#include <QChartView>
#include <QLegend>

#include <array>

namespace kvscope::ui {

void style_chart(QChart* chart, const QPalette& palette) {
  chart->setBackgroundBrush(palette.color(QPalette::Base));
  chart->setBackgroundPen(QPen(palette.color(QPalette::Mid), 1));
  chart->setBackgroundRoundness(2);
  chart->setPlotAreaBackgroundVisible(false);
  chart->setMargins(QMargins(2, 2, 2, 2));
  QFont title = chart->titleFont();
  title.setPointSizeF(9);
  title.setBold(true);
  chart->setTitleFont(title);
  chart->setTitleBrush(palette.color(QPalette::Text));
  QLegend* legend = chart->legend();
  QFont small = legend->font();
  small.setPointSizeF(7.5);
  legend->setFont(small);
  legend->setLabelColor(palette.color(QPalette::Text));
  legend->setAlignment(Qt::AlignBottom);
  legend->setContentsMargins(0, 0, 0, 0);
  for (QAbstractAxis* axis : chart->axes()) style_axis(axis, palette);
}

void style_axis(QAbstractAxis* axis, const QPalette& palette) {
  QFont small = axis->labelsFont();
  small.setPointSizeF(7.5);
  axis->setLabelsFont(small);
  axis->setTitleFont(small);
  axis->setLabelsColor(palette.color(QPalette::Text));
  axis->setTitleBrush(palette.color(QPalette::Text));
  axis->setLinePenColor(palette.color(QPalette::Mid));
  QColor grid = palette.color(QPalette::Text);
  grid.setAlphaF(0.12f);
  axis->setGridLineColor(grid);
}

void setup_chart_view(QChartView* view) {
  view->setRenderHint(QPainter::Antialiasing);
  view->setFrameShape(QFrame::NoFrame);
  view->setMinimumSize(200, 150);
}

QColor series_color(int index) {
  static constexpr std::array<QRgb, 6> kColors = {0x4e79a7, 0xf28e2b, 0x59a14f,
                                                  0xb07aa1, 0xe15759, 0x9c9c9c};
  return QColor(kColors[static_cast<std::size_t>(index) % kColors.size()]);
}

}  // namespace kvscope::ui
