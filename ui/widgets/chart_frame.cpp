#include "widgets/chart_frame.h"

#include <QChartView>
#include <QEvent>
#include <QLegend>
#include <QVBoxLayout>

#include "widgets/chart_legend.h"
#include "widgets/chart_style.h"

namespace kvscope::ui {

ChartFrame::ChartFrame(QWidget* parent)
    : QWidget(parent),
      view_(new QChartView(new QChart, this)),
      legend_(new ChartLegend(this)),
      column_(new QVBoxLayout(this)) {
  setup_chart_view(view_);
  view_->chart()->legend()->hide();  // legend_ replaces it: Qt's would elide every name
  column_->setContentsMargins(0, 0, 0, 0);
  column_->setSpacing(0);
  column_->addWidget(view_, 1);
  column_->addWidget(legend_);
}

QChart* ChartFrame::chart() const {
  return view_->chart();
}

void ChartFrame::restyle() {
  style_chart(view_->chart(), palette());
}

void ChartFrame::changeEvent(QEvent* event) {
  QWidget::changeEvent(event);
  if (event->type() == QEvent::PaletteChange) restyle();
}

}  // namespace kvscope::ui
