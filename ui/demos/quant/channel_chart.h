// QuantChannelChart: the quantization error of every channel (element of a K/V vector)
// for f16, int8, int4 values and int4 keys (offset int4), from kv_quant_round_trip():
// relative RMS error in % on a log axis, so f16's ~0.03% and int4's tens of % read on one
// chart. The outlier channels are
// marked along the top: the channels sharing a quantization group with one lose most.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "kv/format/quant_round_trip.h"
#include "widgets/chart_frame.h"

class QLineSeries;
class QLogValueAxis;
class QScatterSeries;
class QValueAxis;

namespace kvscope::ui {

class QuantChannelChart : public ChartFrame {
  Q_OBJECT

 public:
  explicit QuantChannelChart(QWidget* parent = nullptr);

  static constexpr int kSeries = 4;  // f16, int8, int4 V, int4 K

  // One round trip per series, in that order (others are ignored).
  void setRoundTrips(const std::vector<QuantRoundTrip>& trips,
                     const std::vector<std::int64_t>& outlier_channels);

  // (channel, relative RMS error in %) of series 0 f16, 1 int8, 2 int4 V, 3 int4 K.
  QLineSeries* errorSeries(int dtype) const { return series_[static_cast<std::size_t>(dtype)]; }
  QScatterSeries* outlierSeries() const { return outliers_; }

  // Values below this (an exact channel) are drawn at it: a log axis has no 0.
  static constexpr double kFloorPercent = 1e-4;

 protected:
  void restyle() override;

 private:
  std::array<QLineSeries*, kSeries> series_{};
  QScatterSeries* outliers_;
  QValueAxis* x_;
  QLogValueAxis* y_;
};

}  // namespace kvscope::ui
