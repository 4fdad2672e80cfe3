// FitsPage: "What fits", the interactive planner. The controls on the left choose a model,
// weight type, KV dtypes, GPU, utilisation, batch and context; every change recomputes the
// plan with engine/plan (FitsAnswers) and shows it at once: the verdict and memory bar,
// the longest context and largest batch, the roofline decode speed, the KV-vs-context
// chart for the attention layouts and dtypes, and the plan written out as formulas. With a
// model loaded, "Check against the engine" compares the plan with the real allocator. Under
// the summary, tabs: the chart and formulas, or "Serve with vLLM" (the choices planned over
// a node of the GPU, with the command to run them).
#pragma once

#include <QWidget>

#include <optional>

#include "plan/fits_answers.h"
#include "run/plan_check.h"
#include "worker/engine_messages.h"

class QTabWidget;
class QTextEdit;

namespace kvscope::ui {

class FitsCheckView;
class FitsControls;
class FitsKvChart;
class FitsSummary;
class FitsVllmSection;

class FitsPage : public QWidget {
  Q_OBJECT

 public:
  explicit FitsPage(QWidget* parent = nullptr);

  // The loaded model (nullopt: none). Adds or updates a "Loaded: NAME" entry at the top of
  // the model list, selected (with its cache dtypes and backend) when a model is first
  // given; its weights are info.weights, exact.
  void setLoadedModel(const std::optional<ModelInfo>& info);

  // What the page shows now, and its parts, for tests.
  const FitsAnswers& answers() const { return answers_; }
  FitsControls* controls() const { return controls_; }
  FitsSummary* summary() const { return summary_; }
  FitsKvChart* kvChart() const { return chart_; }
  QTextEdit* formula() const { return formula_; }
  FitsCheckView* checkView() const { return check_; }
  FitsVllmSection* vllmSection() const { return vllm_; }
  QTabWidget* tabs() const { return tabs_; }
  // Points per curve of the KV chart.
  static constexpr int kCurvePoints = 64;

 public slots:
  void showPlanCheck(const kvscope::PlanCheck& check);
  void showPlanCheckError(const QString& message);

 signals:
  void checkRequested();

 private:
  void recompute();

  FitsControls* controls_;
  FitsSummary* summary_;
  FitsKvChart* chart_;
  QTextEdit* formula_;
  FitsCheckView* check_;
  FitsVllmSection* vllm_;
  QTabWidget* tabs_;
  QString catalogue_error_;
  FitsAnswers answers_;
};

}  // namespace kvscope::ui
