#include "models/catalog_table_model.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QGuiApplication>
#include <QLocale>
#include <QPalette>

#include "models/local_models_model.h"
#include "plan/catalog_fit.h"
#include "window/app_palette.h"

namespace kvscope::ui {

namespace {

QString text(const std::string& s) {
  return QString::fromStdString(s);
}

}  // namespace

CatalogTableModel::CatalogTableModel(std::vector<CatalogModel> catalog, QString models_dir,
                                     QObject* parent)
    : QAbstractTableModel(parent),
      catalog_(std::move(catalog)),
      models_dir_(std::move(models_dir)) {
  for (const CatalogModel& m : catalog_) {
    for (const CatalogFile& f : m.files) rows_.push_back({&m, &f});
  }
  setQuestion({});
}

void CatalogTableModel::setQuestion(const LocalFitQuestion& question) {
  answers_.clear();
  for (const Row& r : rows_) answers_.push_back(answer_catalog_fit(*r.model, *r.file, question));
  if (!rows_.isEmpty()) {
    emit dataChanged(index(0, kPlan), index(rowCount() - 1, kPlan),
                     {Qt::DisplayRole, Qt::ToolTipRole});
  }
}

void CatalogTableModel::setRowState(int row, const QString& state, bool failed) {
  if (state.isEmpty()) {
    states_.remove(row);
  } else {
    states_[row] = {state, failed};
  }
  emit dataChanged(index(row, 0), index(row, kColumnCount - 1));
}

QString CatalogTableModel::destination(int row) const {
  return QDir(models_dir_).filePath(text(rows_[row].file->file));
}

bool CatalogTableModel::downloaded(int row) const {
  return QFileInfo::exists(destination(row));
}

QString CatalogTableModel::sizeText(const CatalogFile& f) {
  return QString::fromStdString(catalog_size_text(f));
}

int CatalogTableModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int CatalogTableModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : kColumnCount;
}

QString CatalogTableModel::state_text(int row) const {
  if (states_.contains(row)) return states_[row].first;
  if (downloaded(row)) return tr("downloaded");
  if (!rows_[row].model->supported) return {};
  if (const QFileInfo part(destination(row) + QStringLiteral(".part")); part.exists()) {
    return tr("%1 fetched; Download resumes")
        .arg(QLocale::system().formattedDataSize(part.size(), 0, QLocale::DataSizeSIFormat));
  }
  return rows_[row].file->sha256.empty() ? tr("no checksum known") : QString();
}

QString CatalogTableModel::display_text(int row, int column) const {
  const Row& r = rows_[row];
  switch (column) {
    case kModel:
      return text(r.model->display_name);
    case kQuant:
      return text(r.file->quant);
    case kSize:
      return sizeText(*r.file);
    case kArchitecture:
      return tr("%1, %2").arg(text(r.model->spec.architecture),
                              LocalModelsModel::parameterCount(r.model->n_params));
    case kPlan:
      return r.model->supported ? LocalModelsModel::describeAnswer(answers_[row])
                                : tr("not supported yet");
    case kState:
      return state_text(row);
    default:
      return {};
  }
}

QString CatalogTableModel::tooltip(int row) const {
  const Row& r = rows_[row];
  QString tip =
      tr("%1\n%2 from %3").arg(text(r.file->file), sizeText(*r.file), text(r.file->url()));
  tip += r.file->sha256.empty() ? tr("\nNo sha256 is known for this file: it is not checked.")
                                : tr("\nsha256 %1").arg(text(r.file->sha256));
  if (!r.model->supported) tip += QStringLiteral("\n\n") + text(answers_[row].error);
  if (states_.contains(row)) tip += QStringLiteral("\n\n") + states_[row].first;
  return tip;
}

QVariant CatalogTableModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rowCount()) return {};
  const int row = index.row();
  switch (role) {
    case Qt::DisplayRole:
      return display_text(row, index.column());
    case Qt::ToolTipRole:
      return tooltip(row);
    case Qt::ForegroundRole:
      if (!rows_[row].model->supported) {
        return QGuiApplication::palette().color(QPalette::Disabled, QPalette::Text);
      }
      if (index.column() == kState && states_.value(row).second) {
        return error_text_color(QGuiApplication::palette());
      }
      return {};
    case Qt::TextAlignmentRole:
      return QVariant::fromValue((index.column() == kSize ? Qt::AlignRight : Qt::AlignLeft) |
                                 Qt::AlignVCenter);
    default:
      return {};
  }
}

QVariant CatalogTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case kModel:
      return tr("Model");
    case kQuant:
      return tr("Weights");
    case kSize:
      return tr("Download");
    case kArchitecture:
      return tr("Architecture");
    case kPlan:
      return tr("On the chosen GPU, before download");
    case kState:
      return tr("State");
    default:
      return {};
  }
}

std::vector<CatalogModel> load_shipped_catalog(QString* error) {
  const QString file = QDir(QCoreApplication::applicationDirPath())
                           .filePath(QStringLiteral("../share/kvscope/catalog/models.json"));
  if (!QFileInfo::exists(file)) {
    if (error)
      *error = CatalogTableModel::tr("no download catalog at %1").arg(QDir::cleanPath(file));
    return {};
  }
  try {
    return load_model_catalog(file.toStdString());
  } catch (const std::exception& e) {
    if (error) *error = QString::fromUtf8(e.what());
    return {};
  }
}

}  // namespace kvscope::ui
