#include "demos/quant/layer_chart.h"

#include <QBarCategoryAxis>
#include <QBarSeries>
#include <QBarSet>
#include <QCategoryAxis>
#include <QChart>
#include <QValueAxis>

#include <algorithm>

#include "demos/common/table.h"
#include "widgets/bar_values.h"
#include "widgets/chart_legend.h"
#include "widgets/chart_style.h"
#include "widgets/layer_labels.h"
#include "worker/engine_messages.h"

namespace kvscope::ui {

QuantLayerChart::QuantLayerChart(QWidget* parent)
    : ChartFrame(parent),
      bars_(new QBarSeries),
      k_(new QBarSet(tr("K"))),
      v_(new QBarSet(tr("V"))),
      layers_(new QBarCategoryAxis),
      layer_numbers_(new QCategoryAxis),
      error_axis_(new QValueAxis) {
  QChart* c = chart();
  bars_->append(k_);
  bars_->append(v_);
  c->addSeries(bars_);
  c->addAxis(layers_, Qt::AlignBottom);
  c->addAxis(layer_numbers_, Qt::AlignBottom);
  c->addAxis(error_axis_, Qt::AlignLeft);
  bars_->attachAxis(layers_);
  bars_->attachAxis(error_axis_);
  layer_numbers_->setTitleText(tr("layer"));
  layer_numbers_->setGridLineVisible(false);
  error_axis_->setTitleText(tr("relative RMS error, %"));
  error_axis_->setLabelFormat(QStringLiteral("%.4g"));
  error_axis_->setTickCount(4);
  clear();
}

void QuantLayerChart::clear() {
  measured_ = false;
  set_bar_values(k_, {});
  set_bar_values(v_, {});
  layers_->clear();
  error_axis_->setRange(0, 1);
  chart()->setTitle(tr("Measured in the loaded model"));
  restyle();
}

void QuantLayerChart::setFrame(const PanelFrame& frame) {
  const auto& layers = frame.cache.layers;
  const bool was_measured = measured_;
  measured_ = std::any_of(layers.begin(), layers.end(),
                          [](const LayerKvSnapshot& l) { return l.k.count > 0; });
  if (!measured_) {
    if (k_->count() > 0) clear();
    return;
  }
  const auto n = static_cast<qsizetype>(layers.size());
  if (layers_->count() != n) set_layer_axes(layers_, layer_numbers_, n);
  QList<qreal> k, v;
  double top = 1e-3;
  for (const LayerKvSnapshot& l : layers) {
    k.append(100.0 * l.k.relative_rms_error());
    v.append(100.0 * l.v.relative_rms_error());
    top = std::max({top, k.back(), v.back()});
  }
  set_bar_values(k_, k);
  set_bar_values(v_, v);
  error_axis_->setRange(0, top * 1.15);
  error_axis_->applyNiceNumbers();
  if (!frame.cache.groups.empty()) {
    const LayerGroupSnapshot& g = frame.cache.groups.front();
    const QString title =
        tr("Measured per layer: K %1, V %2").arg(dtype_text(g.k_dtype), dtype_text(g.v_dtype));
    if (chart()->title() != title) chart()->setTitle(title);
  }
  if (!was_measured) restyle();  // the legend turns from the hint into the key
}

void QuantLayerChart::restyle() {
  ChartFrame::restyle();
  k_->setColor(series_color(1));
  k_->setBorderColor(series_color(1).darker(130));
  v_->setColor(series_color(3));
  v_->setBorderColor(series_color(3).darker(130));
  if (measured_) {
    legend()->setEntries(
        {{series_color(1), tr("K")}, {series_color(3), tr("V (every token stored so far)")}});
  } else {
    legend()->setText(
        tr("Load a model and chat: the engine measures the error of every K and V "
           "it stores, layer by layer."));
  }
}

}  // namespace kvscope::ui
