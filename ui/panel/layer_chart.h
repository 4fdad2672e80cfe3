// LayerChart: per model layer, the KV bytes in use (bars, left axis) and the measured
// quantization error of K and V written so far (lines, right axis: relative RMS error in
// %, from the sums the decoder records at write time). When the model is split between
// GPU and CPU the bars are coloured by side, as the legend says: the GPU's layers [0, k)
// in one colour, the CPU's [k, n) in another (two bar sets stacked, each zero on the other
// side's layers).
#pragma once

#include <QList>
#include <QStringList>

#include <cstdint>

#include "widgets/chart_frame.h"

class QBarCategoryAxis;
class QBarSet;
class QCategoryAxis;
class QLineSeries;
class QStackedBarSeries;
class QValueAxis;

namespace kvscope::ui {

struct PanelFrame;

class LayerChart : public ChartFrame {
  Q_OBJECT

 public:
  explicit LayerChart(QWidget* parent = nullptr);

  void update(const PanelFrame& frame);

  // KV bytes in use per layer [n_layers] in bytesUnit() (KiB, MiB or GiB, by the busiest
  // layer): all layers without a split, else the GPU's (the CPU's layers read 0 here and
  // have their bytes in cpuBytesSet()).
  QBarSet* bytesSet() const { return bytes_; }
  QString bytesUnit() const;
  QValueAxis* bytesAxis() const { return bytes_axis_; }
  QBarSet* cpuBytesSet() const { return cpu_bytes_; }
  std::int64_t gpuLayers() const { return gpu_layers_; }  // 0: no split
  QStringList legendTexts() const { return legend_texts_; }
  QLineSeries* kErrorSeries() const { return k_error_; }
  QLineSeries* vErrorSeries() const { return v_error_; }

 protected:
  void restyle() override;

 private:
  void update_legend();

  QStackedBarSeries* bars_;
  QBarSet* bytes_;
  QBarSet* cpu_bytes_;
  QLineSeries* k_error_;
  QLineSeries* v_error_;
  QBarCategoryAxis* layers_;
  QCategoryAxis* layer_numbers_;  // the printed layer numbers (widgets/layer_labels.h)
  QValueAxis* bytes_axis_;
  QValueAxis* error_axis_;
  std::int64_t gpu_layers_ = 0;
  QStringList legend_texts_;
};

}  // namespace kvscope::ui
