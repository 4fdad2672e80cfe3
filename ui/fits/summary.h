// FitsSummary: the answers of the "What fits" page at a glance: the verdict with its margin,
// the memory bar (FitsStackBar) and its legend, and three numbers: the longest context at
// this batch, the most sequences at this context, and the roofline decode speed. A model
// larger than the GPU is answered with its layer split: how many layers fit on the GPU, what
// each side holds (VRAM and RAM), and the split's roofline. It formats a FitsAnswers; every
// number in it is engine/plan's.
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
  QLabel* splitLabel() const { return split_; }
  FitsStackBar* stackBar() const { return bar_; }
  ChartLegend* barLegend() const { return legend_; }

 protected:
  void changeEvent(QEvent* event) override;

 private:
  void show_verdict(const FitsAnswers& a);
  void show_maxima(const FitsAnswers& a);
  void show_roofline(const FitsAnswers& a);
  void show_split(const FitsAnswers& a);
  void show_split_verdict(const LayerSplitPlan& split);
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
  QLabel* split_;
  enum class Verdict { Fits, Partly, DoesNotFit };
  Verdict verdict_kind_ = Verdict::DoesNotFit;
};

}  // namespace kvscope::ui
