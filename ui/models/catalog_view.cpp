#include "models/catalog_view.h"

#include <QDir>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QNetworkAccessManager>
#include <QProgressBar>
#include <QPushButton>
#include <QTableView>
#include <QVBoxLayout>

#include <algorithm>

#include "models/catalog_table_model.h"
#include "models/model_download.h"
#include "window/app_palette.h"

namespace kvscope::ui {

namespace {

constexpr int kProgressSteps = 1000;
constexpr int kMaxColumnWidth = 420;  // pixels; the answer column takes the rest
constexpr int kCellPadding = 12;

}  // namespace

CatalogView::CatalogView(std::vector<CatalogModel> catalog, const QString& models_dir,
                         const QString& catalog_error, QWidget* parent)
    : QWidget(parent),
      model_(new CatalogTableModel(std::move(catalog), models_dir, this)),
      network_(new QNetworkAccessManager(this)),
      endpoint_(qEnvironmentVariable("HF_ENDPOINT",
                                     QString::fromUtf8(CatalogFile::kHuggingFaceEndpoint.data(),
                                                       CatalogFile::kHuggingFaceEndpoint.size()))),
      view_(new QTableView(this)),
      progress_(new QProgressBar(this)),
      status_(new QLabel(this)),
      download_(new QPushButton(tr("Download"), this)),
      cancel_(new QPushButton(tr("Cancel"), this)),
      open_(new QPushButton(tr("Open in chat"), this)) {
  auto* intro = new QLabel(
      tr("Models KVScope can download into %1. The answer is the planner's for the GPU and "
         "context above, from the model's shape, before anything is downloaded.")
          .arg(QDir::toNativeSeparators(models_dir)),
      this);
  intro->setWordWrap(true);
  view_->setModel(model_);
  view_->setSelectionBehavior(QAbstractItemView::SelectRows);
  view_->setSelectionMode(QAbstractItemView::SingleSelection);
  view_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  view_->setWordWrap(false);
  view_->verticalHeader()->hide();
  view_->verticalHeader()->setDefaultSectionSize(fontMetrics().height() + 8);
  view_->horizontalHeader()->setStretchLastSection(true);
  progress_->setRange(0, kProgressSteps);
  progress_->setVisible(false);
  status_->setWordWrap(true);
  status_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  if (!catalog_error.isEmpty()) status_->setText(tr("No download catalog: %1").arg(catalog_error));

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 8, 0, 0);
  layout->addWidget(intro);
  layout->addWidget(view_, 1);
  layout->addWidget(progress_);
  layout->addWidget(build_buttons());

  connect(view_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
          &CatalogView::update_buttons);
  connect(view_, &QTableView::doubleClicked, this, [this](const QModelIndex& index) {
    if (model_->downloaded(index.row())) emit openRequested(model_->destination(index.row()));
  });
  connect(download_, &QPushButton::clicked, this, [this] { download(current_row()); });
  connect(cancel_, &QPushButton::clicked, this, &CatalogView::cancel);
  connect(open_, &QPushButton::clicked, this, [this] {
    if (current_row() >= 0) emit openRequested(model_->destination(current_row()));
  });
  fit_columns();
  update_buttons();
}

// A download still running when the window closes stops and keeps its part file: the
// next Download resumes it.
CatalogView::~CatalogView() = default;

QWidget* CatalogView::build_buttons() {
  auto* bar = new QWidget(this);
  auto* row = new QHBoxLayout(bar);
  row->setContentsMargins(0, 0, 0, 0);
  row->addWidget(status_, 1);
  row->addWidget(download_);
  row->addWidget(cancel_);
  row->addWidget(open_);
  download_->setToolTip(tr("Download the selected file (an interrupted download resumes)"));
  cancel_->setToolTip(tr("Stop the download and delete what it fetched"));
  open_->setToolTip(tr("Open the downloaded model in the chat (or double-click it)"));
  return bar;
}

void CatalogView::fit_columns() {
  QHeaderView* header = view_->horizontalHeader();
  for (int c = 0; c < CatalogTableModel::kPlan; ++c) {
    int width = header->sectionSizeHint(c);
    for (int row = 0; row < model_->rowCount(); ++row) {
      width = std::max(width, view_->sizeHintForIndex(model_->index(row, c)).width());
    }
    header->resizeSection(c, std::min(width + kCellPadding, kMaxColumnWidth));
  }
  header->resizeSection(CatalogTableModel::kPlan, kMaxColumnWidth);
}

void CatalogView::setQuestion(const LocalFitQuestion& question) {
  model_->setQuestion(question);
}

int CatalogView::current_row() const {
  const QModelIndex current = view_->currentIndex();
  return current.isValid() ? current.row() : -1;
}

void CatalogView::update_buttons() {
  const int row = current_row();
  const bool busy = active_ != nullptr && active_->running();
  const bool usable = row >= 0 && model_->rowAt(row).model->supported;
  download_->setEnabled(usable && !busy && !model_->downloaded(row));
  cancel_->setEnabled(busy);
  open_->setEnabled(usable && model_->downloaded(row));
}

void CatalogView::download(int row) {
  if (row < 0 || row >= model_->rowCount() || (active_ != nullptr && active_->running())) return;
  const CatalogTableModel::Row& r = model_->rowAt(row);
  if (!r.model->supported) return;
  delete active_;
  DownloadRequest request{.url = QUrl(QString::fromStdString(r.file->url(endpoint_.toStdString()))),
                          .destination = model_->destination(row),
                          .sha256 = QString::fromStdString(r.file->sha256),
                          .expected_bytes = r.file->bytes,
                          .exact_bytes = r.file->exact_bytes};
  active_ = new ModelDownload(request, network_, this);
  active_row_ = row;
  connect(active_, &ModelDownload::progressChanged, this, &CatalogView::on_progress);
  connect(active_, &ModelDownload::finished, this, &CatalogView::on_finished);
  progress_->setValue(0);
  progress_->setVisible(true);
  status_->setStyleSheet({});
  status_->setText(tr("Downloading %1 %2\u2026")
                       .arg(QString::fromStdString(r.model->display_name),
                            QString::fromStdString(r.file->quant)));
  model_->setRowState(row, tr("starting"), false);
  active_->start();
  update_buttons();
}

void CatalogView::cancel() {
  if (active_ != nullptr) active_->cancel();
}

void CatalogView::on_progress() {
  const DownloadProgress& p = active_->progress();
  if (p.total > 0) {
    progress_->setValue(static_cast<int>(p.received * kProgressSteps / p.total));
  } else {
    progress_->setRange(0, 0);  // busy indicator until the length is known
  }
  const QString text = ModelDownload::describe(p);
  status_->setText(tr("Downloading %1: %2")
                       .arg(QString::fromStdString(model_->rowAt(active_row_).file->file), text));
  const QString percent =
      p.total > 0 ? tr("%1 %").arg(100.0 * static_cast<double>(p.received) / p.total, 0, 'f', 1)
                  : text;
  model_->setRowState(active_row_, tr("downloading %1").arg(percent), false);
}

void CatalogView::on_finished() {
  progress_->setRange(0, kProgressSteps);
  progress_->setVisible(false);
  const QString name = QString::fromStdString(model_->rowAt(active_row_).file->file);
  switch (active_->state()) {
    case ModelDownload::State::Finished:
      model_->setRowState(active_row_, {}, false);
      status_->setText(tr("%1 is in %2. Open it in the chat with Open in chat.")
                           .arg(name, QDir::toNativeSeparators(model_->modelsDir())));
      emit downloaded(model_->destination(active_row_));
      break;
    case ModelDownload::State::Failed:
      model_->setRowState(active_row_, tr("failed: %1").arg(active_->error()), true);
      status_->setStyleSheet(QStringLiteral("color: %1").arg(error_text_color(palette()).name()));
      status_->setText(tr("%1 was not downloaded: %2").arg(name, active_->error()));
      break;
    default:
      model_->setRowState(active_row_, {}, false);
      status_->setText(tr("Download of %1 cancelled; nothing of it was kept.").arg(name));
      break;
  }
  update_buttons();
}

}  // namespace kvscope::ui
