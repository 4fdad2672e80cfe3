#include "memory_chart.h"

#include <QAreaSeries>
#include <QEvent>
#include <QLineSeries>
#include <QValueAxis>

#include <algorithm>

#include "chart_style.h"
#include "plan/units.h"

namespace kvscope::ui {
namespace {

const char* const kPartNames[kMemoryParts] = {"weights",   "KV in use",      "KV pool free",
                                              "workspace", "used by others", "free"};

}  // namespace

MemoryChart::MemoryChart(QWidget* parent)
    : QChartView(new QChart, parent), x_(new QValueAxis), y_(new QValueAxis) {
  setup_chart_view(this);
  QChart* c = chart();
  c->setTitle(tr("Memory as the context grows"));
  c->addAxis(x_, Qt::AlignBottom);
  c->addAxis(y_, Qt::AlignLeft);
  for (int p = 0; p < kMemoryParts; ++p) {
    upper_[p] = new QLineSeries(this);
    areas_[p] = new QAreaSeries(upper_[p], p == 0 ? nullptr : upper_[p - 1]);
    areas_[p]->setName(tr(kPartNames[p]));
    c->addSeries(areas_[p]);
    areas_[p]->attachAxis(x_);
    areas_[p]->attachAxis(y_);
  }
  x_->setTitleText(tr("tokens in cache"));
  x_->setLabelFormat(QStringLiteral("%.0f"));
  x_->setTickCount(4);
  y_->setLabelFormat(QStringLiteral("%.3g"));
  y_->setTickCount(5);
  restyle();
}

void MemoryChart::setShowFree(bool show) {
  show_free_ = show;
  areas_[kFree]->setVisible(show);
}

void MemoryChart::update(const PanelHistory& history) {
  const auto& latest = history.latestMemory();
  std::uint64_t top = show_free_ ? history.total() : 0;
  if (!show_free_) {
    for (int p = 0; p < kFree; ++p) top += latest[static_cast<std::size_t>(p)];
  }
  const double gib = 1024.0 * 1024.0 * 1024.0;
  const double unit = top >= 4 * static_cast<std::uint64_t>(gib) ? gib : 1024.0 * 1024.0;
  y_->setTitleText(unit == gib ? tr("GiB") : tr("MiB"));
  double max_x = 16;
  for (int p = 0; p < kMemoryParts; ++p) {
    QList<QPointF> points = history.memoryStack(p, unit);
    if (!points.isEmpty()) max_x = std::max(max_x, points.back().x());
    upper_[p]->replace(points);
    const QString name = QStringLiteral("%1 %2").arg(
        tr(kPartNames[p]),
        QString::fromStdString(human_bytes(static_cast<std::int64_t>(latest[p]))));
    if (areas_[p]->name() != name) areas_[p]->setName(name);
  }
  x_->setRange(0, max_x);
  y_->setRange(0, std::max(1e-9, static_cast<double>(top) / unit));
}

void MemoryChart::changeEvent(QEvent* event) {
  QChartView::changeEvent(event);
  if (event->type() == QEvent::PaletteChange) restyle();
}

void MemoryChart::restyle() {
  style_chart(chart(), palette());
  static constexpr QRgb kColors[kMemoryParts] = {0x4e79a7, 0xe15759, 0xf1a9a0,
                                                 0x59a14f, 0xb07aa1, 0xbab0ac};
  for (int p = 0; p < kMemoryParts; ++p) {
    QColor fill(kColors[p]);
    areas_[p]->setBrush(fill);
    areas_[p]->setPen(QPen(fill.darker(130), 1));
  }
  areas_[kFree]->setBrush(QColor(0xba, 0xb0, 0xac, 90));
}

}  // namespace kvscope::ui
