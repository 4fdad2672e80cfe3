#include "models/models_page.h"

#include <QComboBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QMenu>
#include <QPushButton>
#include <QSettings>
#include <QSpinBox>
#include <QTabWidget>
#include <QTableView>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>
#include <set>

#include "models/catalog_table_model.h"
#include "models/catalog_view.h"
#include "models/local_models_model.h"
#include "models/model_scanner.h"
#include "widgets/number_text.h"
#include "window/load_settings.h"

namespace kvscope::ui {

namespace {

constexpr auto kAddedFoldersKey = "models/addedFolders";
constexpr int kMaxAddedFolders = 64;
constexpr int kMaxContext = 1 << 24;  // tokens; past any model's limit today
constexpr int kMaxNameWidth = 340;    // pixels; a long HF name elides, its tooltip has it all
constexpr int kCellPadding = 12;      // pixels beside a cell's text

// The settings file is not trusted: only absolute folder paths are kept, at most 64.
QStringList read_added_folders() {
  const QVariant value = QSettings().value(kAddedFoldersKey);
  QStringList folders;
  if (!value.canConvert<QStringList>()) return folders;
  for (const QString& f : value.toStringList()) {
    if (QDir::isAbsolutePath(f) && !folders.contains(f) && folders.size() < kMaxAddedFolders) {
      folders << QDir::cleanPath(f);
    }
  }
  return folders;
}

int index_of_gpu(const QVector<GpuPreset>& gpus, const char* slug) {
  for (int i = 0; i < gpus.size(); ++i) {
    if (gpus[i].slug == slug) return i;
  }
  return gpus.isEmpty() ? -1 : 0;
}

}  // namespace

ModelsPageConfig ModelsPageConfig::thisComputer() {
  ModelsPageConfig c{QDir::homePath(), process_env(), load_gpu_catalogue(), {}, {}};
  c.catalog = load_shipped_catalog(&c.catalog_error);
  return c;
}

ModelsPage::ModelsPage(ModelsPageConfig config, QWidget* parent)
    : QWidget(parent),
      config_(std::move(config)),
      added_(read_added_folders()),
      scanner_(new ModelScanner(this)),
      model_(new LocalModelsModel(this)),
      gpu_(new QComboBox(this)),
      context_(new QSpinBox(this)),
      rescan_(new QPushButton(tr("Rescan"), this)),
      add_folder_(new QPushButton(tr("Add folder\u2026"), this)),
      added_button_(new QToolButton(this)),
      open_(new QPushButton(tr("Open"), this)),
      status_(new QLabel(this)),
      view_(new QTableView(this)),
      catalog_(
          new CatalogView(std::move(config_.catalog),
                          QString::fromStdString(
                              kvscope_models_dir(config_.home.toStdString(), config_.env).string()),
                          config_.catalog_error, this)),
      tabs_(new QTabWidget(this)) {
  fill_gpus();
  context_->setRange(0, kMaxContext);
  context_->setSingleStep(1024);
  context_->setGroupSeparatorShown(true);
  context_->setSpecialValueText(tr("the model's limit"));
  context_->setSuffix(tr(" tokens"));
  context_->setToolTip(tr("The context to plan one sequence for; a model's own limit caps it"));
  status_->setWordWrap(true);
  status_->setAlignment(Qt::AlignLeft | Qt::AlignTop);
  status_->setTextInteractionFlags(Qt::TextSelectableByMouse);

  view_->setModel(model_);
  view_->setSelectionBehavior(QAbstractItemView::SelectRows);
  view_->setSelectionMode(QAbstractItemView::SingleSelection);
  view_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  view_->setWordWrap(false);
  view_->setTextElideMode(Qt::ElideMiddle);  // keeps a name's quantization suffix readable
  view_->verticalHeader()->hide();
  view_->verticalHeader()->setDefaultSectionSize(fontMetrics().height() + 8);
  view_->horizontalHeader()->setStretchLastSection(true);

  tabs_->addTab(build_local_tab(), tr("On this computer"));
  tabs_->addTab(catalog_, tr("Download"));
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(8, 8, 8, 8);
  layout->addWidget(build_controls());
  layout->addWidget(tabs_, 1);

  connect(scanner_, &ModelScanner::started, this, &ModelsPage::on_scan_started);
  connect(scanner_, &ModelScanner::finished, this, &ModelsPage::on_scan_finished);
  connect(gpu_, &QComboBox::currentIndexChanged, this, &ModelsPage::update_answers);
  connect(context_, &QSpinBox::valueChanged, this, &ModelsPage::update_answers);
  connect(rescan_, &QPushButton::clicked, this, &ModelsPage::rescan);
  connect(add_folder_, &QPushButton::clicked, this, &ModelsPage::choose_folder);
  connect(open_, &QPushButton::clicked, this,
          [this] { open_row(view_->currentIndex().isValid() ? view_->currentIndex().row() : -1); });
  connect(view_, &QTableView::doubleClicked, this,
          [this](const QModelIndex& index) { open_row(index.row()); });
  connect(view_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
          &ModelsPage::update_open_button);
  connect(catalog_, &CatalogView::openRequested, this, &ModelsPage::openRequested);
  connect(tabs_, &QTabWidget::currentChanged, this, &ModelsPage::show_tab_buttons);
  connect(catalog_, &CatalogView::downloaded, this, &ModelsPage::rescan);
  update_answers();
  update_open_button();
  status_->setText(tr("Not scanned yet."));
}

QWidget* ModelsPage::build_local_tab() {
  auto* tab = new QWidget(this);
  auto* layout = new QVBoxLayout(tab);
  layout->setContentsMargins(0, 8, 0, 0);
  layout->addWidget(status_);
  layout->addWidget(view_, 1);
  layout->addStretch(0);  // takes the room of the table when it is hidden
  return tab;
}

QWidget* ModelsPage::build_controls() {
  auto* bar = new QWidget(this);
  auto* row = new QHBoxLayout(bar);
  row->setContentsMargins(0, 0, 0, 0);
  row->addWidget(new QLabel(tr("Plan for"), bar));
  row->addWidget(gpu_);
  row->addSpacing(8);
  row->addWidget(new QLabel(tr("Context"), bar));
  row->addWidget(context_);
  row->addStretch(1);
  row->addWidget(rescan_);
  row->addWidget(add_folder_);
  row->addWidget(added_button_);
  row->addWidget(open_);
  rescan_->setToolTip(tr("Look for models again"));
  add_folder_->setToolTip(tr("Also look for GGUF files and Hugging Face folders in a folder"));
  // The menu is built when it opens, so it always lists the folders added so far.
  added_button_->setText(tr("Added folders"));
  added_button_->setPopupMode(QToolButton::InstantPopup);
  added_button_->setToolTip(tr("Forget a folder you added"));
  auto* menu = new QMenu(added_button_);
  added_button_->setMenu(menu);
  connect(menu, &QMenu::aboutToShow, this, [this, menu] {
    menu->clear();
    for (const QString& folder : added_) {
      menu->addAction(tr("Forget %1").arg(QDir::toNativeSeparators(folder)), this,
                      [this, folder] { removeFolder(folder); });
    }
  });
  added_button_->setVisible(!added_.isEmpty());
  open_->setToolTip(tr("Open the selected model (or double-click it)"));
  return bar;
}

void ModelsPage::fill_gpus() {
  for (const GpuPreset& g : config_.gpus) {
    gpu_->addItem(
        QStringLiteral("%1 (%2)").arg(QString::fromStdString(g.name), bytes_text(g.memory_bytes)));
  }
  if (config_.gpus.isEmpty()) {
    gpu_->addItem(tr("no GPU presets found"));
    gpu_->setEnabled(false);
  }
  gpu_->setCurrentIndex(std::max(0, index_of_gpu(config_.gpus, "rtx-4090")));
}

LocalFitQuestion ModelsPage::question() const {
  LocalFitQuestion q;
  const int g = gpu_->currentIndex();
  if (g >= 0 && g < config_.gpus.size()) {
    q.memory_bytes = config_.gpus[g].memory_bytes;
    q.cuda = gpu_workspace_options(config_.gpus[g]);
  }
  q.context = context_->value();
  return q;
}

bool ModelsPage::scanning() const {
  return scanner_->scanning();
}

std::vector<ModelPlace> ModelsPage::places() const {
  std::vector<std::filesystem::path> extra;
  for (const QString& folder : added_) extra.emplace_back(folder.toStdString());
  return model_places(config_.home.toStdString(), config_.env, extra);
}

void ModelsPage::showEvent(QShowEvent* event) {
  QWidget::showEvent(event);
  if (!scanned_once_) rescan();
}

void ModelsPage::rescan() {
  scanned_once_ = true;
  scanner_->scan(places());
}

bool ModelsPage::addFolder(const QString& folder) {
  const QString clean = QDir::cleanPath(QFileInfo(folder).absoluteFilePath());
  if (!QFileInfo(clean).isDir() || added_.contains(clean) || added_.size() >= kMaxAddedFolders) {
    return false;
  }
  added_ << clean;
  save_added_folders();
  return true;
}

bool ModelsPage::removeFolder(const QString& folder) {
  if (added_.removeAll(folder) == 0) return false;
  save_added_folders();
  return true;
}

void ModelsPage::save_added_folders() {
  QSettings().setValue(kAddedFoldersKey, added_);
  show_tab_buttons();
  rescan();
}

// Rescan, Add folder, Added folders and Open act on the first tab; the Download tab has
// buttons of its own.
void ModelsPage::show_tab_buttons() {
  const bool local = tabs_->currentWidget() != catalog_;
  rescan_->setVisible(local);
  add_folder_->setVisible(local);
  added_button_->setVisible(local && !added_.isEmpty());
  open_->setVisible(local);
}

void ModelsPage::choose_folder() {
  const QString folder =
      QFileDialog::getExistingDirectory(this, tr("Add a folder to look for models in"),
                                        added_.isEmpty() ? config_.home : added_.back());
  if (!folder.isEmpty()) addFolder(folder);
}

void ModelsPage::on_scan_started() {
  status_->setText(tr("Scanning\u2026"));
}

void ModelsPage::on_scan_finished() {
  model_->setModels(scanner_->models());
  view_->clearSpans();
  for (int row = 0; row < model_->rowCount(); ++row) {
    if (!model_->modelAt(row).ok()) {
      view_->setSpan(row, LocalModelsModel::kArchitecture, 1,
                     LocalModelsModel::kColumnCount - LocalModelsModel::kArchitecture);
    }
  }
  fit_columns();
  show_result_summary();
  update_open_button();
  emit scanFinished();
}

// "3 models found, 1 of them cannot be read", or, when nothing was found, every folder
// looked in, so the user knows where to put a model or which folder to add.
void ModelsPage::show_result_summary() {
  const int found = model_->rowCount();
  const auto broken = std::count_if(model_->models().begin(), model_->models().end(),
                                    [](const LocalModel& m) { return !m.ok(); });
  view_->setVisible(found > 0);  // with nothing found the message is the page
  if (found > 0) {
    QString text = found == 1 ? tr("1 model found") : tr("%1 models found").arg(found);
    if (broken > 0) {
      text += broken == 1 ? tr(", 1 of them cannot be read")
                          : tr(", %1 of them cannot be read").arg(broken);
    }
    status_->setText(text + tr(". Double-click one to open it."));
    return;
  }
  QStringList roots;
  std::set<std::filesystem::path> seen;
  for (const ModelPlace& p : places()) {
    if (!seen.insert(p.root).second) continue;
    roots << tr("%1 (%2)").arg(QDir::toNativeSeparators(QString::fromStdString(p.root.string())),
                               QString::fromStdString(p.source));
  }
  status_->setText(tr("No models found. Looked in:\n%1\n\nDownload one with one of these tools, "
                      "or add the folder that holds your GGUF files (Add folder\u2026).")
                       .arg(roots.join(QLatin1Char('\n'))));
}

// Every column as wide as its header and its readable rows' text, the name at most
// kMaxNameWidth; the answer takes the rest. A broken row's error spans the columns from
// Architecture on and is elided there, so it does not widen them.
void ModelsPage::fit_columns() {
  QHeaderView* header = view_->horizontalHeader();
  for (int c = 0; c < LocalModelsModel::kPlan; ++c) {
    int width = header->sectionSizeHint(c);
    for (int row = 0; row < model_->rowCount(); ++row) {
      if (c >= LocalModelsModel::kArchitecture && !model_->modelAt(row).ok()) continue;
      width = std::max(width, view_->sizeHintForIndex(model_->index(row, c)).width());
    }
    header->resizeSection(c, std::min(width + kCellPadding, kMaxNameWidth));
  }
}

void ModelsPage::update_answers() {
  model_->setQuestion(question());
  catalog_->setQuestion(question());
}

void ModelsPage::update_open_button() {
  const QModelIndex current = view_->currentIndex();
  open_->setEnabled(current.isValid() && model_->modelAt(current.row()).ok());
}

void ModelsPage::open_row(int row) {
  if (row < 0 || row >= model_->rowCount() || !model_->modelAt(row).ok()) return;
  emit openRequested(QString::fromStdString(model_->modelAt(row).path.string()));
}

}  // namespace kvscope::ui
