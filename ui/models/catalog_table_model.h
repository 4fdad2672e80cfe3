// CatalogTableModel: the "Download" tab's table. One row per file of the download catalog
// (engine/model/catalog): model, quantization, download size, architecture, the planner's
// answer for the page's GPU and context before anything is downloaded (answer_catalog_fit),
// and the row's state: downloaded (the file is in the models folder), downloading with its
// progress, the last failure, or nothing yet. Models the engine does not run are greyed,
// their answer "not supported yet".
#pragma once

#include <QAbstractTableModel>
#include <QHash>
#include <QString>
#include <QVector>

#include <vector>

#include "model/catalog/model_catalog.h"
#include "plan/local_model_fit.h"

namespace kvscope::ui {

class CatalogTableModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column { kModel, kQuant, kSize, kArchitecture, kPlan, kState, kColumnCount };

  CatalogTableModel(std::vector<CatalogModel> catalog, QString models_dir,
                    QObject* parent = nullptr);

  void setQuestion(const LocalFitQuestion& question);
  // A row's live state: "downloading 12 %, ...", or a failure; empty clears it.
  void setRowState(int row, const QString& text, bool failed);

  struct Row {
    const CatalogModel* model;
    const CatalogFile* file;
  };
  const Row& rowAt(int row) const { return rows_[row]; }
  const LocalFitAnswer& answerAt(int row) const { return answers_[row]; }
  // Where the row's file goes (and is, once downloaded).
  QString destination(int row) const;
  bool downloaded(int row) const;
  const QString& modelsDir() const { return models_dir_; }
  // "~398 MB", "~2.02 GB" for a file page's rounded size, "1.93 GB" for an exact one.
  static QString sizeText(const CatalogFile& file);

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

 private:
  QString display_text(int row, int column) const;
  QString state_text(int row) const;
  QString tooltip(int row) const;

  std::vector<CatalogModel> catalog_;
  QVector<Row> rows_;
  QVector<LocalFitAnswer> answers_;
  QHash<int, QPair<QString, bool>> states_;  // row -> (text, failed)
  QString models_dir_;
};

// The catalog shipped beside the binary (share/kvscope/catalog/models.json); empty with
// `error` set when it is missing or broken.
std::vector<CatalogModel> load_shipped_catalog(QString* error);

}  // namespace kvscope::ui
