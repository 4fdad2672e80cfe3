#include "panel/layer_chart.h"

#include <QBarCategoryAxis>
#include <QBarSet>
#include <QCategoryAxis>
#include <QChart>
#include <QLineSeries>
#include <QStackedBarSeries>
#include <QValueAxis>

#include <algorithm>

#include "panel/split_sides.h"
#include "widgets/bar_values.h"
#include "widgets/chart_legend.h"
#include "widgets/chart_style.h"
#include "widgets/layer_labels.h"
#include "worker/engine_messages.h"

namespace kvscope::ui {
namespace {

// The bars' colours: the device's (a split's GPU layers), and a split's CPU layers, apart
// from the error lines' (series 1 and 3) in both palettes.
QColor gpu_color() {
  return series_color(0);
}
QColor cpu_color() {
  return series_color(2);
}

// The unit the bytes axis counts in: the largest of KiB, MiB and GiB that the busiest layer
// holds at least one of, so a 7B model at a long context reads "32.0" MiB, not "3.28e+04" KiB.
struct ByteUnit {
  double bytes;
  const char* name;
};
ByteUnit bytes_unit(double max_bytes) {
  constexpr ByteUnit kUnits[] = {
      {1024.0 * 1024.0 * 1024.0, QT_TRANSLATE_NOOP("kvscope::ui::LayerChart", "GiB")},
      {1024.0 * 1024.0, QT_TRANSLATE_NOOP("kvscope::ui::LayerChart", "MiB")}};
  for (const ByteUnit& u : kUnits) {
    if (max_bytes >= u.bytes) return u;
  }
  return {1024.0, QT_TRANSLATE_NOOP("kvscope::ui::LayerChart", "KiB")};
}

}  // namespace

LayerChart::LayerChart(QWidget* parent)
    : ChartFrame(parent),
      bars_(new QStackedBarSeries),
      bytes_(new QBarSet(tr("KV in use"))),
      cpu_bytes_(new QBarSet(tr("KV in use, CPU layers"))),
      k_error_(new QLineSeries),
      v_error_(new QLineSeries),
      layers_(new QBarCategoryAxis),
      layer_numbers_(new QCategoryAxis),
      bytes_axis_(new QValueAxis),
      error_axis_(new QValueAxis) {
  QChart* c = chart();
  c->setTitle(tr("Per layer: KV bytes and quantization error"));
  bars_->append(bytes_);
  bars_->append(cpu_bytes_);
  k_error_->setName(tr("K error (rel. RMS %)"));
  v_error_->setName(tr("V error (rel. RMS %)"));
  k_error_->setPointsVisible(true);
  v_error_->setPointsVisible(true);
  c->addSeries(bars_);
  c->addSeries(k_error_);
  c->addSeries(v_error_);
  c->addAxis(layers_, Qt::AlignBottom);
  c->addAxis(layer_numbers_, Qt::AlignBottom);
  c->addAxis(bytes_axis_, Qt::AlignLeft);
  c->addAxis(error_axis_, Qt::AlignRight);
  bars_->attachAxis(layers_);
  bars_->attachAxis(bytes_axis_);
  for (QLineSeries* s : {k_error_, v_error_}) {
    s->attachAxis(layers_);
    s->attachAxis(error_axis_);
  }
  layer_numbers_->setTitleText(tr("layer"));
  layer_numbers_->setGridLineVisible(false);
  bytes_axis_->setTitleText(tr("KiB"));
  bytes_axis_->setLabelFormat(QStringLiteral("%.4g"));
  error_axis_->setTitleText(tr("%"));
  error_axis_->setLabelFormat(QStringLiteral("%.2g"));
  bytes_axis_->setTickCount(4);
  error_axis_->setTickCount(4);
  restyle();
}

void LayerChart::update(const PanelFrame& frame) {
  const auto& layers = frame.cache.layers;
  const auto n = static_cast<qsizetype>(layers.size());
  if (layers_->count() != n) set_layer_axes(layers_, layer_numbers_, n);
  // Without a split every layer is the device's: gpu_layers = n puts them all in bytes_.
  const std::int64_t gpu_layers = frame.split ? frame.split->gpu_layers : n;
  double max_bytes = 0;
  for (const LayerKvSnapshot& l : layers) {
    max_bytes = std::max(max_bytes, static_cast<double>(l.bytes_in_use));
  }
  const ByteUnit unit = bytes_unit(max_bytes);
  QList<qreal> gpu_values, cpu_values;
  QList<QPointF> k_err, v_err;
  double max_err = 1e-3;
  for (qsizetype i = 0; i < n; ++i) {
    const LayerKvSnapshot& l = layers[static_cast<std::size_t>(i)];
    const double value = static_cast<double>(l.bytes_in_use) / unit.bytes;
    const bool gpu = layer_on_gpu(l.layer, gpu_layers);
    gpu_values.append(gpu ? value : 0.0);
    cpu_values.append(gpu ? 0.0 : value);
    k_err.append({static_cast<double>(i), 100.0 * l.k.relative_rms_error()});
    v_err.append({static_cast<double>(i), 100.0 * l.v.relative_rms_error()});
    max_err = std::max({max_err, k_err.back().y(), v_err.back().y()});
  }
  set_bar_values(bytes_, gpu_values);
  set_bar_values(cpu_bytes_, cpu_values);
  k_error_->replace(k_err);
  v_error_->replace(v_err);
  bytes_axis_->setTitleText(tr(unit.name));
  // round ticks (0, 10, 20, 30 rather than 0, 101, 202, 304) over the busiest layer and a tenth
  bytes_axis_->setRange(0, std::max(1.0, max_bytes / unit.bytes * 1.1));
  bytes_axis_->setTickCount(4);
  bytes_axis_->applyNiceNumbers();
  error_axis_->setRange(0, max_err * 1.2);
  const std::int64_t split = frame.split ? frame.split->gpu_layers : 0;
  if (split != gpu_layers_) {
    gpu_layers_ = split;
    update_legend();
  }
}

QString LayerChart::bytesUnit() const {
  return bytes_axis_->titleText();
}

// Without a split one bar colour; with one, a colour per side, named in the legend.
void LayerChart::update_legend() {
  QVector<LegendEntry> entries;
  if (gpu_layers_ > 0) {
    entries.push_back({gpu_color(), tr("KV bytes in use: GPU layers (left)")});
    entries.push_back({cpu_color(), tr("CPU layers")});
  } else {
    entries.push_back({gpu_color(), tr("KV bytes in use (left)")});
  }
  entries.push_back({series_color(1), tr("K error"), true});
  entries.push_back({series_color(3), tr("V error (relative RMS %, right)"), true});
  legend_texts_.clear();
  for (const LegendEntry& e : entries) legend_texts_ << e.text;
  legend()->setEntries(entries);
}

void LayerChart::restyle() {
  ChartFrame::restyle();
  update_legend();
  bytes_->setColor(gpu_color());
  bytes_->setBorderColor(gpu_color().darker(130));
  cpu_bytes_->setColor(cpu_color());
  cpu_bytes_->setBorderColor(cpu_color().darker(130));
  k_error_->setPen(QPen(series_color(1), 2));
  k_error_->setColor(series_color(1));
  v_error_->setPen(QPen(series_color(3), 2));
  v_error_->setColor(series_color(3));
}

}  // namespace kvscope::ui
