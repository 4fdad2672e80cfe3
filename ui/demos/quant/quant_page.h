// KvQuantDemoPage: what storing K and V in fewer bits costs in accuracy and buys in
// capacity. Synthetic K/V (make_synthetic_kv: Gaussian, a few outlier channels scaled up)
// go through the engine's own quantize / dequantize (kv_quant_round_trip) in f16, int8 and
// int4, as keys and as values (int4 keys are offset int4): the table gives each dtype's
// bytes per token and KV head and the relative RMS error of K and of V, a chart the error
// of every channel. For the chosen model (a preset or the loaded one) the table adds
// the KV bytes per token and the longest context a KV budget holds in each dtype (the
// planner). With a model loaded, setPanelFrame() shows the error the engine measured in
// every layer while it ran, for the dtype in use.
#pragma once

#include <QWidget>

#include <array>
#include <optional>
#include <vector>

#include "kv/format/quant_round_trip.h"
#include "kv/format/synthetic_kv.h"
#include "worker/engine_messages.h"

class QDoubleSpinBox;
class QLabel;
class QSpinBox;
class QTableWidget;

namespace kvscope::ui {

class DemoModelChooser;
class QuantChannelChart;
class QuantLayerChart;

class KvQuantDemoPage : public QWidget {
  Q_OBJECT

 public:
  // Table columns.
  enum Column { kDtype, kBytesPerHead, kKError, kVError, kMeasured, kPerLayer, kPerToken, kFits };

  explicit KvQuantDemoPage(QWidget* parent = nullptr);

  void setLoadedModel(const std::optional<kvscope::ui::ModelInfo>& info);

  DemoModelChooser* modelChooser() const { return chooser_; }
  QTableWidget* table() const { return table_; }
  QuantChannelChart* channelChart() const { return channel_chart_; }
  QuantLayerChart* layerChart() const { return layer_chart_; }
  // The synthetic data as the controls set it, and its round trips stored as `side` in
  // dtype row 0 f16, 1 int8, 2 int4.
  SyntheticKvSpec syntheticSpec() const;
  const QuantRoundTrip& roundTrip(KvSide side, int row) const;

 public slots:
  void setPanelFrame(const kvscope::ui::PanelFrame& frame);

 private:
  QWidget* build_controls();
  void recompute_synthetic();
  void recompute_capacity();
  void set_headers();

  DemoModelChooser* chooser_;
  QSpinBox* head_dim_;
  QSpinBox* vectors_;
  QSpinBox* outliers_;
  QDoubleSpinBox* outlier_scale_;
  QSpinBox* seed_;
  QDoubleSpinBox* budget_gib_;
  QLabel* notice_;
  QTableWidget* table_;
  QLabel* table_note_;
  QuantChannelChart* channel_chart_;
  QuantLayerChart* layer_chart_;
  std::array<std::vector<QuantRoundTrip>, 2> trips_;  // [K, V][f16, int8, int4]
};

}  // namespace kvscope::ui
