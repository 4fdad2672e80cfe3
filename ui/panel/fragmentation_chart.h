// FragmentationChart: % of KV slots left empty over time, for the paged cache (the empty
// slots of partly filled tail blocks) and for a contiguous cache that reserves the whole
// context per sequence, holding the same sequences.
#pragma once

#include "widgets/chart_frame.h"

class QLineSeries;
class QValueAxis;

namespace kvscope::ui {

class PanelHistory;

class FragmentationChart : public ChartFrame {
  Q_OBJECT

 public:
  explicit FragmentationChart(QWidget* parent = nullptr);

  // One replace() per series.
  void update(const PanelHistory& history);

  QLineSeries* pagedSeries() const { return paged_; }
  QLineSeries* contiguousSeries() const { return contiguous_; }

 protected:
  void restyle() override;

 private:
  void update_legend(const PanelHistory& history);

  QLineSeries* paged_;
  QLineSeries* contiguous_;
  QValueAxis* x_;
  QValueAxis* y_;
};

}  // namespace kvscope::ui
