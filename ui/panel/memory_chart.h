// MemoryChart: where the device's memory goes as the context grows (x = tokens in the
// cache): weights, KV in use, KV pool free, workspace, used by others and free, stacked.
// The legend carries the latest value of each part. "Free" is drawn only on request, so
// that a small model on a big device stays readable; its value is always in the legend.
#pragma once

#include <array>

#include "panel/history.h"
#include "widgets/chart_frame.h"

class QAreaSeries;
class QLineSeries;
class QValueAxis;

namespace kvscope::ui {

class MemoryChart : public ChartFrame {
  Q_OBJECT

 public:
  explicit MemoryChart(QWidget* parent = nullptr);

  // One replace() per series.
  void update(const PanelHistory& history);
  void setShowFree(bool show);

  QLineSeries* upperSeries(int part) const { return upper_[static_cast<std::size_t>(part)]; }

 protected:
  void restyle() override;

 private:
  void update_legend(const PanelHistory& history);

  std::array<QLineSeries*, kMemoryParts> upper_{};
  std::array<QAreaSeries*, kMemoryParts> areas_{};
  QValueAxis* x_;
  QValueAxis* y_;
  bool show_free_ = false;
};

}  // namespace kvscope::ui
