#include "models/local_models_model.h"

#include <QDir>
#include <QGuiApplication>
#include <QPalette>

#include <utility>

#include "widgets/number_text.h"

namespace kvscope::ui {

namespace {

QString text(const std::string& s) {
  return QString::fromStdString(s);
}

bool is_number_column(int column) {
  using C = LocalModelsModel::Column;
  return column == C::kParameters || column == C::kSize || column == C::kContext;
}

}  // namespace

LocalModelsModel::LocalModelsModel(QObject* parent) : QAbstractTableModel(parent) {}

void LocalModelsModel::setModels(std::vector<LocalModel> models) {
  beginResetModel();
  models_ = std::move(models);
  recompute_answers();
  endResetModel();
}

void LocalModelsModel::setQuestion(const LocalFitQuestion& question) {
  question_ = question;
  recompute_answers();
  if (!models_.empty()) {
    emit dataChanged(index(0, kPlan), index(rowCount() - 1, kPlan),
                     {Qt::DisplayRole, Qt::ToolTipRole});
  }
}

// Each answer is a few plan_memory calls: cheap enough for every row at every change.
void LocalModelsModel::recompute_answers() {
  answers_.clear();
  answers_.reserve(models_.size());
  for (const LocalModel& m : models_) answers_.push_back(answer_local_fit(m, question_));
}

QString LocalModelsModel::describeAnswer(const LocalFitAnswer& a) {
  if (!a.ok()) return tr("no answer: %1").arg(text(a.error));
  const QString dtype = QString::fromUtf8(kv_dtype_name(a.kv_dtype).data());
  if (a.fits) {
    return tr("fits %1 tokens, KV %2 (up to %3)")
        .arg(count_text(a.context), dtype, count_text(a.max_context.tokens));
  }
  if (a.gpu_layers > 0) {
    return tr("fits with %1 of %2 layers on the GPU at %3 tokens, KV %4 (short by %5 whole)")
        .arg(a.gpu_layers)
        .arg(a.n_layers)
        .arg(count_text(a.context), dtype, bytes_text(a.short_by_bytes));
  }
  return tr("short by %1 at %2 tokens, KV %3")
      .arg(bytes_text(a.short_by_bytes), count_text(a.context), dtype);
}

// A count that rounds up to the next unit is written in it: Gemma 3 1B's 999,885,952 is
// "1.00B", not "1000M".
QString LocalModelsModel::parameterCount(std::int64_t n) {
  const auto scaled = [n](double unit) { return static_cast<double>(n) / unit; };
  if (n >= 999'500'000) return QStringLiteral("%1B").arg(scaled(1e9), 0, 'f', 2);
  if (n >= 999'500) return QStringLiteral("%1M").arg(scaled(1e6), 0, 'f', 0);
  if (n >= 1'000) return QStringLiteral("%1K").arg(scaled(1e3), 0, 'f', 0);
  return QString::number(n);
}

int LocalModelsModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(models_.size());
}

int LocalModelsModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : kColumnCount;
}

QString LocalModelsModel::display_text(const LocalModel& m, int row, int column) const {
  if (column == kName) return text(m.name);
  if (column == kSource) return text(m.source);
  if (!m.ok()) return column == kArchitecture ? tr("error: %1").arg(text(m.error)) : QString();
  switch (column) {
    case kArchitecture:
      return text(m.architecture);
    case kParameters:
      return parameterCount(m.n_params);
    case kWeights:
      return text(m.weight_type);
    case kSize:
      return bytes_text(static_cast<std::int64_t>(m.file_bytes));
    case kContext:
      return count_text(m.context_length);
    case kPlan:
      return describeAnswer(answerAt(row));
    default:
      return {};
  }
}

QString LocalModelsModel::tooltip(const LocalModel& m, int row) const {
  QString path = QDir::toNativeSeparators(QString::fromStdString(m.path.string()));
  if (m.n_parts > 1) path += tr(" (part 1 of %1)").arg(m.n_parts);
  if (!m.ok()) return tr("%1\n\nCannot be read: %2").arg(path, text(m.error));
  return tr("%1\n\n%2").arg(path, describeAnswer(answerAt(row)));
}

QVariant LocalModelsModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rowCount()) return {};
  const LocalModel& m = modelAt(index.row());
  switch (role) {
    case Qt::DisplayRole:
      return display_text(m, index.row(), index.column());
    case Qt::ToolTipRole:
      return tooltip(m, index.row());
    case Qt::ForegroundRole:
      // Greyed as the palette greys what cannot be used, so it reads in both themes.
      if (!m.ok()) return QGuiApplication::palette().color(QPalette::Disabled, QPalette::Text);
      return {};
    case Qt::TextAlignmentRole:
      if (m.ok() && is_number_column(index.column())) {
        return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
      }
      return QVariant::fromValue(Qt::AlignLeft | Qt::AlignVCenter);
    case kPathRole:
      return QString::fromStdString(m.path.string());
    default:
      return {};
  }
}

QVariant LocalModelsModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal) return {};
  if (role == Qt::TextAlignmentRole) {  // over the column's values
    return QVariant::fromValue((is_number_column(section) ? Qt::AlignRight : Qt::AlignLeft) |
                               Qt::AlignVCenter);
  }
  if (role != Qt::DisplayRole) return {};
  switch (section) {
    case kName:
      return tr("Name");
    case kSource:
      return tr("Source");
    case kArchitecture:
      return tr("Architecture");
    case kParameters:
      return tr("Parameters");
    case kWeights:
      return tr("Weights");
    case kSize:
      return tr("Size");
    case kContext:
      return tr("Context");
    case kPlan:
      return tr("On the chosen GPU");
    default:
      return {};
  }
}

}  // namespace kvscope::ui
