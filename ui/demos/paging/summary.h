// PagingSummaryTable: the run's figures per policy (engine/sim's SimSummary), one column
// per policy, one row per figure. Each cell keeps the exact value under Qt::UserRole.
#pragma once

#include <QTableWidget>

#include "sim/simulation.h"

namespace kvscope::ui {

class PagingSummaryTable : public QTableWidget {
  Q_OBJECT

 public:
  enum Row {
    UsedShare,
    ReservedShare,
    InternalShare,
    ExternalShare,
    Admitted,
    Finished,
    PeakRunning,
    MeanRunning,
    Steps,
    Preemptions,
    MeanWait,
    RowCount
  };

  explicit PagingSummaryTable(QWidget* parent = nullptr);

  // nullptr shows dashes.
  void setResult(const SimulationResult* result);
  // The exact value of a cell (shares as fractions, counts as integers).
  QVariant value(Row row, int column) const;
  QString text(Row row, int column) const;

  QSize sizeHint() const override;
};

}  // namespace kvscope::ui
