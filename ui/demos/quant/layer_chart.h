// QuantLayerChart: the quantization error the engine measured in the loaded model, per
// layer, as bars: relative RMS error in % of K and of V over everything written so far
// (the sums the decoder records at write time, CacheSnapshot::layers). Until a frame with
// measurements arrives it says how to get one.
#pragma once

#include "widgets/chart_frame.h"

class QBarCategoryAxis;
class QCategoryAxis;
class QBarSeries;
class QBarSet;
class QValueAxis;

namespace kvscope::ui {

struct PanelFrame;

class QuantLayerChart : public ChartFrame {
  Q_OBJECT

 public:
  explicit QuantLayerChart(QWidget* parent = nullptr);

  void setFrame(const PanelFrame& frame);
  // Forgets the measurements (model unloaded or switched).
  void clear();

  QBarSet* kSet() const { return k_; }
  QBarSet* vSet() const { return v_; }
  bool hasMeasurements() const { return measured_; }

 protected:
  void restyle() override;

 private:
  QBarSeries* bars_;
  QBarSet* k_;
  QBarSet* v_;
  QBarCategoryAxis* layers_;
  QCategoryAxis* layer_numbers_;  // the printed layer numbers (widgets/layer_labels.h)
  QValueAxis* error_axis_;
  bool measured_ = false;
};

}  // namespace kvscope::ui
