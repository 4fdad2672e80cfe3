// MemoryChart: where the device's memory goes as the context grows (x = tokens in the
// cache): weights, KV in use, KV pool free, workspace, used by others and free, stacked.
// The legend carries the latest value of each part. "Free" can be left out so that a
// small model on a big device stays readable.
#pragma once

#include <QChartView>

#include <array>

#include "panel_history.h"

class QAreaSeries;
class QLineSeries;
class QValueAxis;

namespace kvscope::ui {

class MemoryChart : public QChartView {
  Q_OBJECT

 public:
  explicit MemoryChart(QWidget* parent = nullptr);

  // One replace() per series.
  void update(const PanelHistory& history);
  void setShowFree(bool show);

  QLineSeries* upperSeries(int part) const { return upper_[static_cast<std::size_t>(part)]; }

 protected:
  void changeEvent(QEvent* event) override;

 private:
  void restyle();

  std::array<QLineSeries*, kMemoryParts> upper_{};
  std::array<QAreaSeries*, kMemoryParts> areas_{};
  QValueAxis* x_;
  QValueAxis* y_;
  bool show_free_ = true;
};

}  // namespace kvscope::ui
