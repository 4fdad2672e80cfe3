// LayerChart: per model layer, the KV bytes in use (bars, left axis) and the measured
// quantization error of K and V written so far (lines, right axis: relative RMS error in
// %, from the sums the decoder records at write time).
#pragma once

#include "widgets/chart_frame.h"

class QBarCategoryAxis;
class QCategoryAxis;
class QBarSeries;
class QBarSet;
class QLineSeries;
class QValueAxis;

namespace kvscope::ui {

struct PanelFrame;

class LayerChart : public ChartFrame {
  Q_OBJECT

 public:
  explicit LayerChart(QWidget* parent = nullptr);

  void update(const PanelFrame& frame);

  QBarSet* bytesSet() const { return bytes_; }
  QLineSeries* kErrorSeries() const { return k_error_; }
  QLineSeries* vErrorSeries() const { return v_error_; }

 protected:
  void restyle() override;

 private:
  QBarSeries* bars_;
  QBarSet* bytes_;
  QLineSeries* k_error_;
  QLineSeries* v_error_;
  QBarCategoryAxis* layers_;
  QCategoryAxis* layer_numbers_;  // the printed layer numbers (widgets/layer_labels.h)
  QValueAxis* bytes_axis_;
  QValueAxis* error_axis_;
};

}  // namespace kvscope::ui
