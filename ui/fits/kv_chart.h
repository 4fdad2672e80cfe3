// FitsKvChart: KV memory the batch needs against context length (kv_curves()): the model
// as it is (thick), and the same shape as MHA, GQA and MQA (colour) with K and V in f16,
// int8 and int4 (solid, dashed, dotted), with the KV budget as a horizontal line and the
// chosen context as a vertical one. The y range reaches the model's own curve and the
// budget, so the crossing (the longest context) shows; other curves above it are clipped.
// A budget above every curve (a small model) is named in the legend instead, so the
// curves are not squashed flat.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "plan/kv_curves.h"
#include "widgets/chart_frame.h"

class QLabel;
class QLineSeries;
class QValueAxis;

namespace kvscope::ui {

class FitsKvChart : public ChartFrame {
  Q_OBJECT

 public:
  static constexpr int kLayouts = 3;  // MHA, GQA, MQA
  static constexpr int kDtypes = 3;   // f16, int8, int4

  explicit FitsKvChart(QWidget* parent = nullptr);

  // One replace() per series. `curves` as kv_curves() returns them.
  void setCurves(const std::vector<KvCurve>& curves, std::int64_t kv_budget_bytes,
                 std::int64_t context);

  // Bytes per unit of the y axis (2^30 for GiB, 2^20 for MiB, 2^10 for KiB).
  double yUnitBytes() const { return unit_; }
  QLineSeries* ownSeries() const { return own_; }
  // The curve of one layout (0 MHA, 1 GQA, 2 MQA) and dtype (0 f16, 1 int8, 2 int4);
  // empty and hidden when the model has no such layout.
  QLineSeries* variantSeries(int layout, int dtype) const;
  QLineSeries* budgetSeries() const { return budget_; }
  QLineSeries* contextSeries() const { return context_; }
  QValueAxis* yAxis() const { return y_; }

 protected:
  void restyle() override;

 private:
  void update_legend();

  QLabel* style_key_;
  QLineSeries* own_;
  std::array<QLineSeries*, kLayouts * kDtypes> variants_{};
  QLineSeries* budget_;
  QLineSeries* context_;
  QValueAxis* x_;
  QValueAxis* y_;
  double unit_ = 1.0;
  double last_top_ = -1.0;  // bytes at the top of the y range
  // What the legend was last built from (rebuilt with the palette's colours on a change).
  std::vector<KvCurve> curves_;
  std::int64_t budget_bytes_ = 0;
  bool budget_shown_ = false;
  std::int64_t context_tokens_ = 0;
};

}  // namespace kvscope::ui
