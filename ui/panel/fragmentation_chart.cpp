#include "panel/fragmentation_chart.h"

#include <QChart>
#include <QLineSeries>
#include <QValueAxis>

#include <algorithm>

#include "panel/history.h"
#include "widgets/chart_legend.h"
#include "widgets/chart_style.h"

namespace kvscope::ui {

FragmentationChart::FragmentationChart(QWidget* parent)
    : ChartFrame(parent),
      paged_(new QLineSeries),
      contiguous_(new QLineSeries),
      x_(new QValueAxis),
      y_(new QValueAxis) {
  QChart* c = chart();
  c->setTitle(tr("KV slots wasted (%)"));
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
  x_->setTickCount(3);
  x_->setRange(0, 1);
  y_->setRange(0, 100);
  y_->setLabelFormat(QStringLiteral("%.0f"));
  y_->setTickCount(5);
  restyle();
  update_legend({});
}

void FragmentationChart::update(const PanelHistory& history) {
  paged_->replace(history.pagedWaste());
  contiguous_->replace(history.contiguousWaste());
  if (!history.pagedWaste().isEmpty()) {
    const double first = history.pagedWaste().front().x();
    const double last = history.pagedWaste().back().x();
    x_->setLabelFormat(last - first < 3 ? QStringLiteral("%.1f") : QStringLiteral("%.0f"));
    x_->setRange(first, std::max(last, first + 1.0));
  }
  update_legend(history);
}

void FragmentationChart::update_legend(const PanelHistory& history) {
  const auto now = [](const QList<QPointF>& points) {
    return points.isEmpty() ? QString() : QStringLiteral(" %1%").arg(points.back().y(), 0, 'f', 1);
  };
  legend()->setEntries(
      {{series_color(0), tr("paged: empty tail slots") + now(history.pagedWaste()), true},
       {series_color(1), tr("contiguous: reserved, unused") + now(history.contiguousWaste()),
        true}});
}

void FragmentationChart::restyle() {
  ChartFrame::restyle();
  paged_->setPen(QPen(series_color(0), 2));
  contiguous_->setPen(QPen(series_color(1), 2, Qt::DashLine));
}

}  // namespace kvscope::ui
