// PagingUtilisationChart: one line per policy over the steps of a run: the share of the
// memory holding tokens (the default), the sequences running, or the requests admitted so
// far; a vertical line marks the step the block map shows.
#pragma once

#include <array>
#include <cstdint>

#include "sim/simulation.h"
#include "widgets/chart_frame.h"

class QComboBox;
class QLineSeries;
class QValueAxis;

namespace kvscope::ui {

class PagingUtilisationChart : public ChartFrame {
  Q_OBJECT

 public:
  enum class Metric { Stored, Running, Admitted };

  explicit PagingUtilisationChart(QWidget* parent = nullptr);

  // The run to chart (nullptr clears). The pointer is kept until the next call.
  void setResult(const SimulationResult* result);
  // The step the vertical marker stands at (the frame of step - 1 is shown; 0: none).
  void setCurrentStep(std::int64_t step);
  void setMetric(Metric metric);
  Metric metric() const { return metric_; }

  QLineSeries* series(std::size_t policy) const { return lines_[policy]; }
  QLineSeries* marker() const { return marker_; }
  QComboBox* metricBox() const { return metric_box_; }

 protected:
  void restyle() override;

 private:
  void refill();
  double value(const SimFrame& f) const;

  QComboBox* metric_box_;
  std::array<QLineSeries*, 3> lines_{};
  QLineSeries* marker_;
  QValueAxis* x_;
  QValueAxis* y_;
  const SimulationResult* result_ = nullptr;
  Metric metric_ = Metric::Stored;
  std::int64_t step_ = 0;
};

}  // namespace kvscope::ui
