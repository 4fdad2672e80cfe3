// FitsCheckView: "Check against the engine". With a model loaded, its button asks the
// engine (through the page's checkRequested signal) to grow one sequence to the planned
// longest context on the current backend; the answer, a PlanCheck, is shown as predicted
// vs allocated: the KV pool, the KV in use at the maximum, and the tokens reached, with
// whether they agree exactly and whether the next token was refused. A model split between
// GPU and CPU (run/split_backend.h) adds each side's rows: the layers on the GPU, and each
// side's weights and KV pool (PlanCheck::split), shown only for a split.
#pragma once

#include <QGroupBox>

#include <array>
#include <optional>

#include "run/plan_check.h"

class QLabel;
class QPushButton;

namespace kvscope::ui {

class FitsCheckView : public QGroupBox {
  Q_OBJECT

 public:
  enum Row { Pool, Used, Tokens, GpuLayers, GpuWeights, GpuPool, CpuWeights, CpuPool };
  enum Column { Predicted, Allocated };
  static constexpr int kRows = 8;
  static constexpr int kFirstSplitRow = GpuLayers;
  static constexpr int kColumns = 2;

  explicit FitsCheckView(QWidget* parent = nullptr);

  // Enables the button and forgets the last result (it was about another model).
  void setModelLoaded(bool loaded);
  void showCheck(const PlanCheck& check);
  void showError(const QString& message);

  QPushButton* button() const { return button_; }
  QLabel* statusLabel() const { return status_; }
  QLabel* cell(Row row, Column column) const;
  // Whether the split's rows are shown (the last check was of a split engine).
  bool splitRowsShown() const { return split_shown_; }

 signals:
  void checkRequested();

 private:
  void clear_cells();
  void show_split(const std::optional<SplitCheck>& split);

  QPushButton* button_;
  QLabel* status_;
  std::array<QLabel*, kRows * kColumns> cells_{};
  std::array<QLabel*, kRows> row_labels_{};
  bool loaded_ = false;
  bool split_shown_ = false;
};

}  // namespace kvscope::ui
