#include "widgets/chart_frame.h"

#include <QChartView>
#include <QEvent>
#include <QVBoxLayout>

#include "widgets/chart_legend.h"
#include "widgets/chart_style.h"

namespace kvscope::ui {

QuantChartPanel::QuantChartPanel(QWidget* parent)
    : QWidget(parent), view_(new QChartView(new QChart, this)), legend_(new ChartLegend(this)) {
  chart_over_legend(this, view_, legend_);
}

QChart* QuantChartPanel::chart() const {
  return view_->chart();
}

void QuantChartPanel::restyle() {
  style_chart(view_->chart(), palette());
}

void QuantChartPanel::changeEvent(QEvent* event) {
  QWidget::changeEvent(event);
  if (event->type() == QEvent::PaletteChange) restyle();
}

}  // namespace kvscope::ui
