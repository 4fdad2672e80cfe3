// FitsVllmSection: "Serve with vLLM", the What fits page's choices planned over a node of
// its GPU as vLLM splits a model (engine/plan/parallel_plan.h). The tensor and pipeline
// parallel sizes and the KV cache dtype are chosen here; the model, weights, GPU,
// utilisation, batch (--max-num-seqs) and context (--max-model-len) are the page's. It
// asks plan_parallel with the request the CLI's `plan --tp --pp` builds and shows one
// memory bar per pipeline stage (a stage's tp GPUs are alike), the verdict, and the
// `vllm serve` command to copy. A shape vLLM would refuse shows the planner's message
// instead of bars.
//
// Above the bars, vLLM's own answer for the same server (engine/plan/vllm_memory.h), for the
// chosen vLLM release and checkpoint format: the KV tokens and maximum concurrency vLLM's log
// will report, or why it will not start, and the largest max_model_len that starts; beside
// the command, each term of vLLM's accounting written out. The bars below stay KVScope's own
// engine on the same GPUs, for comparison.
#pragma once

#include <QWidget>

#include <optional>
#include <vector>

#include "plan/fits_answers.h"
#include "plan/parallel_plan.h"
#include "plan/vllm_command.h"
#include "plan/vllm_memory.h"

class QComboBox;
class QLabel;
class QPlainTextEdit;
class QPushButton;
class QSpinBox;
class QVBoxLayout;

namespace kvscope::ui {

class FitsStackBar;

class FitsVllmSection : public QWidget {
  Q_OBJECT

 public:
  explicit FitsVllmSection(QWidget* parent = nullptr);

  // Plans `inputs` (a preset's: n_params > 0) at the chosen shape; `model` is the name
  // vllm serve is given. An empty `model` or no parameter count shows why instead.
  void setInputs(const FitsInputs& inputs, const QString& model);

  // The request and plan shown (nullopt: an error is shown), and the command's arguments.
  const ParallelRequest& request() const { return request_; }
  const std::optional<ParallelPlan>& plan() const { return plan_; }
  const VllmArgs& args() const { return args_; }

  QSpinBox* tpBox() const { return tp_; }
  QSpinBox* ppBox() const { return pp_; }
  QComboBox* kvDtypeBox() const { return kv_dtype_; }
  QComboBox* vllmVersionBox() const { return version_; }
  QComboBox* vllmWeightsBox() const { return weights_; }
  // vLLM's own figures: the verdict line and the terms (empty while an error is shown).
  QLabel* vllmVerdictLabel() const { return vllm_verdict_; }
  QPlainTextEdit* vllmTermsEdit() const { return vllm_terms_; }
  const std::optional<VllmMemoryPlan>& vllmPlan() const { return vllm_plan_; }
  QLabel* gpusLabel() const { return gpus_; }
  QLabel* verdictLabel() const { return verdict_; }
  QLabel* errorLabel() const { return error_; }
  QPlainTextEdit* commandEdit() const { return command_; }
  QPushButton* copyButton() const { return copy_; }
  // One bar per pipeline stage of the plan shown (none while an error is shown).
  const std::vector<FitsStackBar*>& stageBars() const { return bars_; }

 protected:
  void changeEvent(QEvent* event) override;  // the error lines' red follows the theme

 private:
  void on_shape_changed();
  void recompute();
  void show_plan(const ParallelPlan& plan);
  void show_error(const QString& message);
  void show_vllm_plan();
  void clear_bars();

  FitsInputs inputs_;
  QString model_;
  ParallelRequest request_;
  std::optional<ParallelPlan> plan_;
  VllmArgs args_;
  std::optional<VllmMemoryPlan> vllm_plan_;
  QSpinBox* tp_;
  QSpinBox* pp_;
  QComboBox* kv_dtype_;
  QComboBox* version_;
  QComboBox* weights_;
  QLabel* vllm_verdict_;
  QPlainTextEdit* vllm_terms_;
  QLabel* gpus_;
  QLabel* verdict_;
  QLabel* error_;
  QWidget* bars_box_;
  QVBoxLayout* bars_layout_;
  QPlainTextEdit* command_;
  QPushButton* copy_;
  std::vector<FitsStackBar*> bars_;
  std::vector<QWidget*> bar_rows_;
};

}  // namespace kvscope::ui
