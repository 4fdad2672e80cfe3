// LocalModelsModel: the table of the "Models" page. One row per model that
// scan_local_models() found: name, the tool that keeps it, architecture, parameters,
// weight type, size on disk, context, and the planner's answer (answer_local_fit) for the
// GPU memory and context chosen on the page. A broken entry keeps its name and source and
// shows its error, greyed, in the Architecture column (the page spans it to the end); the
// full error and the path are its tooltip.
#pragma once

#include <QAbstractTableModel>
#include <QString>

#include <vector>

#include "model/discovery/local_model.h"
#include "plan/local_model_fit.h"

namespace kvscope::ui {

class LocalModelsModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column {
    kName,
    kSource,
    kArchitecture,
    kParameters,
    kWeights,
    kSize,
    kContext,
    kPlan,
    kColumnCount
  };
  // The row's file or folder, as QString (any column).
  static constexpr int kPathRole = Qt::UserRole;

  explicit LocalModelsModel(QObject* parent = nullptr);

  // Replaces every row (a finished scan).
  void setModels(std::vector<LocalModel> models);
  // Recomputes the planner column for this question; the rows stay.
  void setQuestion(const LocalFitQuestion& question);

  const std::vector<LocalModel>& models() const { return models_; }
  const LocalModel& modelAt(int row) const { return models_[static_cast<std::size_t>(row)]; }
  const LocalFitAnswer& answerAt(int row) const { return answers_[static_cast<std::size_t>(row)]; }
  const LocalFitQuestion& question() const { return question_; }

  // "fits 2,048 tokens, KV f16 (up to 8,192)", "short by 1.5 GiB at 8,192 tokens, KV int4".
  static QString describeAnswer(const LocalFitAnswer& answer);
  // "135M", "6.74B": parameters as model cards write them.
  static QString parameterCount(std::int64_t n);

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

 private:
  QString display_text(const LocalModel& m, int row, int column) const;
  QString tooltip(const LocalModel& m, int row) const;
  void recompute_answers();

  std::vector<LocalModel> models_;
  std::vector<LocalFitAnswer> answers_;  // one per row, for question_
  LocalFitQuestion question_;
};

}  // namespace kvscope::ui
