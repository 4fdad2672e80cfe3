// FitsSummary: the answers of the "What fits" page at a glance: the verdict with its margin,
// the memory bar (FitsStackBar) and its legend, and three numbers: the longest context at
// this batch, the most sequences at this context, and the roofline decode speed. It
// formats a FitsAnswers; every number in it is engine/plan's.
#pragma once

#include <QWidget>

#include "plan/fits_answers.h"

class QLabel;

namespace kvscope::ui {

class ChartLegend;
class FitsStackBar;

class FitsSummary : public QWidget {
  Q_OBJECT

 public:
  explicit FitsSummary(QWidget* parent = nullptr);

  // `total_bytes`: the GPU's memory, the bar's full width.
  void setAnswers(const FitsAnswers& answers, std::int64_t total_bytes);

  QLabel* verdictLabel() const { return verdict_; }
  QLabel* maxContextLabel() const { return max_context_; }
  QLabel* maxBatchLabel() const { return max_batch_; }
  QLabel* rooflineLabel() const { return roofline_; }
  FitsStackBar* stackBar() const { return bar_; }
  ChartLegend* barLegend() const { return legend_; }

 protected:
  void changeEvent(QEvent* event) override;

 private:
  void show_verdict(const FitsAnswers& a);
  void show_maxima(const FitsAnswers& a);
  void show_roofline(const FitsAnswers& a);
  void show_legend(const FitsAnswers& a);
  QString kv_legend_text(const MemoryPlan& p) const;
  void restyle();

  QLabel* verdict_;
  FitsStackBar* bar_;
  ChartLegend* legend_;
  QLabel* max_context_caption_;
  QLabel* max_context_;
  QLabel* max_batch_caption_;
  QLabel* max_batch_;
  QLabel* roofline_caption_;
  QLabel* roofline_;
  bool fits_ = false;
};

}  // namespace kvscope::ui
