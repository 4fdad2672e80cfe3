#include "fragmentation_chart.h"

#include <QEvent>
#include <QLineSeries>
#include <QValueAxis>

#include <algorithm>

#include "chart_style.h"
#include "panel_history.h"

namespace kvscope::ui {

FragmentationChart::FragmentationChart(QWidget* parent)
    : QChartView(new QChart, parent),
      paged_(new QLineSeries),
      contiguous_(new QLineSeries),
      x_(new QValueAxis),
      y_(new QValueAxis) {
  setup_chart_view(this);
  QChart* c = chart();
  c->setTitle(tr("KV slots wasted (%)"));
  paged_->setName(tr("paged: empty tail slots"));
  contiguous_->setName(tr("contiguous: reserved, unused"));
  c->addSeries(contiguous_);
  c->addSeries(paged_);
  c->addAxis(x_, Qt::AlignBottom);
  c->addAxis(y_, Qt::AlignLeft);
  for (QLineSeries* s : {paged_, contiguous_}) {
    s->attachAxis(x_);
    s->attachAxis(y_);
  }
  x_->setTitleText(tr("seconds"));
  x_->setLabelFormat(QStringLiteral("%.0f"));
  x_->setTickCount(4);
  y_->setRange(0, 100);
  y_->setLabelFormat(QStringLiteral("%.0f"));
  y_->setTickCount(5);
  x_->setRange(0, 10);
  restyle();
}

void FragmentationChart::update(const PanelHistory& history) {
  paged_->replace(history.pagedWaste());
  contiguous_->replace(history.contiguousWaste());
  if (!history.pagedWaste().isEmpty()) {
    const double last = history.pagedWaste().back().x();
    const double first = history.pagedWaste().front().x();
    x_->setRange(first, std::max(last, first + 10.0));
  }
}

void FragmentationChart::changeEvent(QEvent* event) {
  QChartView::changeEvent(event);
  if (event->type() == QEvent::PaletteChange) restyle();
}

void FragmentationChart::restyle() {
  style_chart(chart(), palette());
  paged_->setPen(QPen(series_color(0), 2));
  contiguous_->setPen(QPen(series_color(1), 2, Qt::DashLine));
}

}  // namespace kvscope::ui
