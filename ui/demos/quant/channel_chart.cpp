#include "demos/quant/channel_chart.h"

#include <QChart>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QScatterSeries>
#include <QValueAxis>

#include <algorithm>
#include <cmath>

#include "widgets/chart_legend.h"
#include "widgets/chart_style.h"

namespace kvscope::ui {
namespace {

constexpr int kColor[] = {0, 1, 4, 3};  // series_color index of f16, int8, int4 V, int4 K

}  // namespace

QuantChannelChart::QuantChannelChart(QWidget* parent)
    : ChartFrame(parent), outliers_(new QScatterSeries), x_(new QValueAxis), y_(new QLogValueAxis) {
  QChart* c = chart();
  c->addAxis(x_, Qt::AlignBottom);
  c->addAxis(y_, Qt::AlignLeft);
  for (std::size_t d = 0; d < series_.size(); ++d) {
    series_[d] = new QLineSeries;
    c->addSeries(series_[d]);
    series_[d]->attachAxis(x_);
    series_[d]->attachAxis(y_);
  }
  outliers_->setMarkerShape(QScatterSeries::MarkerShapeTriangle);
  outliers_->setMarkerSize(11);
  c->addSeries(outliers_);
  outliers_->attachAxis(x_);
  outliers_->attachAxis(y_);
  x_->setTitleText(tr("channel"));
  x_->setLabelFormat(QStringLiteral("%d"));
  x_->setTickType(QValueAxis::TicksDynamic);
  x_->setTickAnchor(0);
  y_->setTitleText(tr("relative RMS error, %"));
  y_->setLabelFormat(QStringLiteral("%g"));
  y_->setBase(10);
  restyle();
}

void QuantChannelChart::setRoundTrips(const std::vector<QuantRoundTrip>& trips,
                                      const std::vector<std::int64_t>& outlier_channels) {
  double lo = 1e9, hi = 0;
  std::int64_t head_dim = 1;
  for (std::size_t d = 0; d < series_.size(); ++d) {
    QList<QPointF> points;
    if (d < trips.size()) {
      head_dim = trips[d].head_dim;
      for (std::size_t c = 0; c < trips[d].per_channel.size(); ++c) {
        const double e = 100.0 * trips[d].per_channel[c].relative_rms_error();
        points.append({static_cast<double>(c), std::max(kFloorPercent, e)});
        lo = std::min(lo, points.back().y());
        hi = std::max(hi, points.back().y());
      }
    }
    series_[d]->replace(points);
  }
  if (hi <= 0) lo = hi = 1;
  // Decades around the data, one more on top for the outlier marks.
  const double top = std::pow(10.0, std::ceil(std::log10(hi)) + 1);
  // A hair below the decade, so that the axis labels it (it labels decades inside the range).
  y_->setRange(0.999 * std::pow(10.0, std::floor(std::log10(lo))), top);
  x_->setRange(0, static_cast<double>(std::max<std::int64_t>(1, head_dim - 1)));
  // Ticks on quantization group boundaries where they are few enough to read.
  x_->setTickInterval(head_dim > 128 ? 32 : head_dim > 64 ? 16 : head_dim > 16 ? 8 : 2);
  QList<QPointF> marks;
  QStringList names;
  for (const std::int64_t c : outlier_channels) {
    marks.append({static_cast<double>(c), top / 2.5});
    names << QString::number(c);
  }
  outliers_->replace(marks);
  chart()->setTitle(names.isEmpty()
                        ? tr("Error per channel (synthetic K/V, no outliers)")
                        : tr("Error per channel (synthetic K/V) \u00b7 \u25b2 outlier channels %1")
                              .arg(names.join(QStringLiteral(", "))));
}

void QuantChannelChart::restyle() {
  ChartFrame::restyle();
  const QString names[] = {tr("f16"), tr("int8"), tr("int4 V"), tr("int4 K (offset)")};
  QVector<LegendEntry> entries;
  for (std::size_t d = 0; d < series_.size(); ++d) {
    const QColor color = series_color(kColor[d]);
    series_[d]->setPen(QPen(color, 1.8));
    entries.append({color, names[d], true});
  }
  outliers_->setColor(palette().color(QPalette::Text));
  outliers_->setBorderColor(palette().color(QPalette::Text));
  legend()->setEntries(entries);
}

}  // namespace kvscope::ui
