#include "panel/layer_chart.h"

#include <QBarCategoryAxis>
#include <QBarSeries>
#include <QBarSet>
#include <QCategoryAxis>
#include <QChart>
#include <QLineSeries>
#include <QValueAxis>

#include <algorithm>

#include "widgets/chart_legend.h"
#include "widgets/chart_style.h"
#include "widgets/layer_labels.h"
#include "worker/engine_messages.h"

namespace kvscope::ui {

LayerChart::LayerChart(QWidget* parent)
    : ChartFrame(parent),
      bars_(new QBarSeries),
      bytes_(new QBarSet(tr("KV in use"))),
      k_error_(new QLineSeries),
      v_error_(new QLineSeries),
      layers_(new QBarCategoryAxis),
      layer_numbers_(new QCategoryAxis),
      bytes_axis_(new QValueAxis),
      error_axis_(new QValueAxis) {
  QChart* c = chart();
  c->setTitle(tr("Per layer: KV bytes and quantization error"));
  bars_->append(bytes_);
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
  bytes_axis_->setLabelFormat(QStringLiteral("%.3g"));
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
  QList<qreal> kib;
  QList<QPointF> k_err, v_err;
  double max_kib = 1, max_err = 1e-3;
  for (qsizetype i = 0; i < n; ++i) {
    const LayerKvSnapshot& l = layers[static_cast<std::size_t>(i)];
    kib.append(static_cast<double>(l.bytes_in_use) / 1024.0);
    k_err.append({static_cast<double>(i), 100.0 * l.k.relative_rms_error()});
    v_err.append({static_cast<double>(i), 100.0 * l.v.relative_rms_error()});
    max_kib = std::max(max_kib, kib.back());
    max_err = std::max({max_err, k_err.back().y(), v_err.back().y()});
  }
  // QBarSet has no replace(list): rewrite the values in place when the count is unchanged.
  if (bytes_->count() == n) {
    for (qsizetype i = 0; i < n; ++i) {
      if (bytes_->at(i) != kib[i]) bytes_->replace(i, kib[i]);
    }
  } else {
    if (bytes_->count() > 0) bytes_->remove(0, bytes_->count());
    bytes_->append(kib);
  }
  k_error_->replace(k_err);
  v_error_->replace(v_err);
  bytes_axis_->setRange(0, max_kib * 1.1);
  error_axis_->setRange(0, max_err * 1.2);
}

void LayerChart::restyle() {
  ChartFrame::restyle();
  legend()->setEntries({{series_color(0), tr("KV bytes in use (left)")},
                        {series_color(1), tr("K error"), true},
                        {series_color(3), tr("V error (relative RMS %, right)"), true}});
  bytes_->setColor(series_color(0));
  bytes_->setBorderColor(series_color(0).darker(130));
  k_error_->setPen(QPen(series_color(1), 2));
  k_error_->setColor(series_color(1));
  v_error_->setPen(QPen(series_color(3), 2));
  v_error_->setColor(series_color(3));
}

}  // namespace kvscope::ui
