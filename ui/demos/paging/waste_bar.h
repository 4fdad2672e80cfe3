// PagingWasteBar: for each policy one bar of the memory it took over the whole run (slot-
// steps), split into stored tokens, reserved, internal and external waste: the picture of
// vLLM's Figure 2. The stored part is the used-slot share.
#pragma once

#include <array>

#include "sim/simulation.h"
#include "widgets/chart_frame.h"

class QBarSet;
class QHorizontalStackedBarSeries;

namespace kvscope::ui {

class PagingWasteBar : public ChartFrame {
  Q_OBJECT

 public:
  explicit PagingWasteBar(QWidget* parent = nullptr);

  // nullptr clears the bars.
  void setResult(const SimulationResult* result);

  // [stored, reserved, internal, external], values in % per policy (kSimPolicies order).
  QBarSet* set(std::size_t part) const { return sets_[part]; }

 protected:
  void restyle() override;

 private:
  QHorizontalStackedBarSeries* series_;
  std::array<QBarSet*, 4> sets_{};
};

}  // namespace kvscope::ui
