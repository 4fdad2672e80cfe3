#include "panel/memory_chart.h"

#include <QAreaSeries>
#include <QChart>
#include <QLineSeries>
#include <QValueAxis>

#include <algorithm>

#include "panel/split_sides.h"
#include "plan/units.h"
#include "widgets/chart_legend.h"
#include "widgets/chart_style.h"

namespace kvscope::ui {
namespace {

const char* const kPartNames[kMemoryParts] = {
    QT_TRANSLATE_NOOP("kvscope::ui::MemoryChart", "weights"),
    QT_TRANSLATE_NOOP("kvscope::ui::MemoryChart", "KV in use"),
    QT_TRANSLATE_NOOP("kvscope::ui::MemoryChart", "KV pool free"),
    QT_TRANSLATE_NOOP("kvscope::ui::MemoryChart", "workspace"),
    QT_TRANSLATE_NOOP("kvscope::ui::MemoryChart", "others"),
    QT_TRANSLATE_NOOP("kvscope::ui::MemoryChart", "free")};
constexpr QRgb kPartColors[kMemoryParts] = {0x4e79a7, 0xe15759, 0xf1a9a0,
                                            0x59a14f, 0xb07aa1, 0xbab0ac};

}  // namespace

MemoryChart::MemoryChart(MemorySide side, QWidget* parent)
    : ChartFrame(parent), side_(side), x_(new QValueAxis), y_(new QValueAxis) {
  QChart* c = chart();
  title_ = tr("Memory as the context grows");
  c->setTitle(title_);
  c->addAxis(x_, Qt::AlignBottom);
  c->addAxis(y_, Qt::AlignLeft);
  for (int p = 0; p < kMemoryParts; ++p) {
    upper_[p] = new QLineSeries(this);
    areas_[p] = new QAreaSeries(upper_[p], p == 0 ? nullptr : upper_[p - 1]);
    c->addSeries(areas_[p]);
    areas_[p]->attachAxis(x_);
    areas_[p]->attachAxis(y_);
  }
  x_->setTitleText(tr("tokens in cache"));
  x_->setLabelFormat(QStringLiteral("%.0f"));
  x_->setTickCount(3);
  y_->setLabelFormat(QStringLiteral("%.3g"));
  y_->setTickCount(4);
  areas_[kFree]->setVisible(show_free_);
  restyle();
}

void MemoryChart::setShowFree(bool show) {
  show_free_ = show;
  areas_[kFree]->setVisible(show);
}

// Without a split the one chart is the device's memory; a split's VRAM and RAM say which
// layers each holds.
void MemoryChart::update_title(const PanelHistory& history) {
  const std::optional<SplitMemory>& split = history.split();
  const QString title =
      !split ? tr("Memory as the context grows")
             : side_memory_title(side_ == kDeviceMemory ? SplitSide::Gpu : SplitSide::Cpu, *split);
  if (title == title_) return;
  title_ = title;
  fit_title();
}

// A split's RAM title names the CPU's layers and what else it holds; beside the VRAM chart it
// is often wider than the chart: then it breaks after its first comma (the chart's title is
// rich text) rather than being cut off.
void MemoryChart::fit_title() {
  const QFontMetrics fm(chart()->titleFont());
  const int room = width() - 16;  // the chart's margins and frame
  const qsizetype comma = title_.indexOf(QStringLiteral(", "));
  QString shown = title_.toHtmlEscaped();
  if (fm.horizontalAdvance(title_) > room && comma > 0) {
    shown = title_.left(comma + 1).toHtmlEscaped() + QStringLiteral("<br>") +
            title_.mid(comma + 2).toHtmlEscaped();
  }
  if (chart()->title() != shown) chart()->setTitle(shown);
}

void MemoryChart::resizeEvent(QResizeEvent* event) {
  ChartFrame::resizeEvent(event);
  fit_title();
}

void MemoryChart::update(const PanelHistory& history) {
  update_title(history);
  const auto& latest = history.latestMemory(side_);
  std::uint64_t top = 0;
  for (int p = 0; p < (show_free_ ? kMemoryParts : kFree); ++p) top += latest[p];
  const double gib = 1024.0 * 1024.0 * 1024.0;
  const double unit = static_cast<double>(top) >= 4 * gib ? gib : 1024.0 * 1024.0;
  y_->setTitleText(unit == gib ? tr("GiB") : tr("MiB"));
  double max_x = 16;
  for (int p = 0; p < kMemoryParts; ++p) {
    QList<QPointF> points = history.memoryStack(p, unit, side_);
    if (!points.isEmpty()) max_x = std::max(max_x, points.back().x());
    upper_[p]->replace(points);
  }
  x_->setRange(0, max_x);
  y_->setRange(0, std::max(1e-6, static_cast<double>(top) / unit * 1.05));
  update_legend(history);
}

void MemoryChart::update_legend(const PanelHistory& history) {
  QVector<LegendEntry> entries;
  legend_texts_.clear();
  for (int p = 0; p < kMemoryParts; ++p) {
    const auto bytes = static_cast<std::int64_t>(history.latestMemory(side_)[p]);
    QString text =
        tr(kPartNames[p]) + QLatin1Char(' ') + QString::fromStdString(human_bytes(bytes));
    if (p == kFree && !show_free_) text += tr(" (not drawn)");
    entries.push_back({QColor(kPartColors[p]), text});
    legend_texts_ << text;
  }
  legend()->setEntries(entries);
}

void MemoryChart::restyle() {
  ChartFrame::restyle();
  fit_title();  // in the title font restyle set
  for (int p = 0; p < kMemoryParts; ++p) {
    const QColor fill(kPartColors[p]);
    areas_[p]->setBrush(fill);
    areas_[p]->setPen(QPen(fill.darker(130), 1));
  }
}

}  // namespace kvscope::ui
