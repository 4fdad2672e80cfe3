#include "remote/time_chart.h"

#include <QChart>
#include <QLineSeries>
#include <QValueAxis>

#include <algorithm>

#include "widgets/chart_legend.h"
#include "widgets/chart_style.h"

namespace kvscope::ui {

TimeChart::TimeChart(const QString& title, QVector<TimeLine> lines, double y_max, QWidget* parent)
    : ChartFrame(parent),
      lines_(std::move(lines)),
      shown_(lines_.size(), true),
      x_(new QValueAxis),
      y_(new QValueAxis),
      y_max_(y_max) {
  QChart* c = chart();
  c->setTitle(title);
  c->addAxis(x_, Qt::AlignBottom);
  c->addAxis(y_, Qt::AlignLeft);
  for (int i = 0; i < lines_.size(); ++i) {
    auto* s = new QLineSeries;
    c->addSeries(s);
    s->attachAxis(x_);
    s->attachAxis(y_);
    series_.append(s);
  }
  x_->setTitleText(tr("seconds"));
  x_->setLabelFormat(QStringLiteral("%.0f"));
  x_->setTickCount(3);
  y_->setLabelFormat(QStringLiteral("%g"));
  y_->setTickCount(5);
  restyle();
  clear();
}

void TimeChart::clear() {
  setPoints(QVector<QList<QPointF>>(lines_.size()), 0.0, 0.0);
}

void TimeChart::setLineShown(int line, bool shown) {
  shown_[line] = shown;
  series_[line]->setVisible(shown);
}

void TimeChart::setPoints(const QVector<QList<QPointF>>& points, double x_from, double x_to) {
  double top = 0.0;
  for (int i = 0; i < series_.size(); ++i) {
    const QList<QPointF>& p = i < points.size() ? points[i] : QList<QPointF>();
    series_[i]->replace(p);
    series_[i]->setPointsVisible(p.size() < 30);  // a lone scrape shows as a dot
    for (const QPointF& q : p) top = std::max(top, q.y());
  }
  x_->setRange(x_from, std::max(x_to, x_from + 10.0));
  if (y_max_ > 0) {
    y_->setRange(0, y_max_);
    y_->setTickCount(5);
  } else {
    // counts (no decimals) get whole ticks: at least 0 to 5
    const bool counts = std::all_of(lines_.begin(), lines_.end(),
                                    [](const TimeLine& l) { return l.decimals == 0; });
    y_->setRange(0, std::max(top * 1.05, counts ? 5.0 : 1.0));
    y_->applyNiceNumbers();  // round ticks: 0, 10, 20 ... rather than 0, 12.5, 25 ...
  }
  update_legend(points);
}

void TimeChart::update_legend(const QVector<QList<QPointF>>& points) {
  QVector<LegendEntry> entries;
  for (int i = 0; i < lines_.size(); ++i) {
    if (!shown_[i]) continue;
    const TimeLine& l = lines_[i];
    QString text = l.name;
    if (i < points.size() && !points[i].isEmpty()) {
      text += QStringLiteral(" %1%2").arg(points[i].back().y(), 0, 'f', l.decimals).arg(l.unit);
    } else {
      text += QStringLiteral(" \u2013");
    }
    entries.append({series_color(i), text, true});
  }
  legend()->setEntries(entries);
}

void TimeChart::restyle() {
  ChartFrame::restyle();
  for (int i = 0; i < series_.size(); ++i) {
    series_[i]->setPen(QPen(series_color(i), 2, lines_[i].dashed ? Qt::DashLine : Qt::SolidLine));
  }
}

}  // namespace kvscope::ui
