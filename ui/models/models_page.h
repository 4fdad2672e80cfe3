// ModelsPage: "Models", the models already on this computer. The GGUF files and Hugging
// Face folders other tools keep (Hugging Face, Ollama, LM Studio, GPT4All, llama.cpp, Jan,
// KVScope's cache) and the folders the user added are scanned off the GUI thread
// (ModelScanner) and listed with their headers' facts and the planner's answer for the
// chosen GPU and context; changing those recomputes the answers without scanning again.
// A double-click or Open asks the window to open the model (openRequested). Added folders
// are kept in QSettings ("models/addedFolders") and can be forgotten again. The "Download"
// tab (CatalogView) lists the download catalog with the answer for the same GPU and
// context before download; a finished download is scanned into the first tab.
#pragma once

#include <QString>
#include <QStringList>
#include <QVector>
#include <QWidget>

#include <vector>

#include "model/catalog/model_catalog.h"
#include "model/discovery/model_places.h"
#include "plan/local_model_fit.h"
#include "plan/presets.h"

class QComboBox;
class QLabel;
class QPushButton;
class QSpinBox;
class QTabWidget;
class QToolButton;
class QTableView;

namespace kvscope::ui {

class CatalogView;
class LocalModelsModel;
class ModelScanner;

struct ModelsPageConfig {
  QString home;                       // the home folder the tools' places are under
  EnvLookup env;                      // $HF_HOME, $OLLAMA_MODELS, ... (model_places.h)
  QVector<GpuPreset> gpus;            // the GPUs to answer for
  std::vector<CatalogModel> catalog;  // what the Download tab offers
  QString catalog_error;              // why `catalog` is empty, when it is

  // This computer: QDir::homePath(), the process environment, the shipped GPU presets and
  // download catalog.
  static ModelsPageConfig thisComputer();
};

class ModelsPage : public QWidget {
  Q_OBJECT

 public:
  explicit ModelsPage(ModelsPageConfig config, QWidget* parent = nullptr);

  // Scans again (queued behind a scan that runs). The first show scans by itself.
  void rescan();
  // Remembers `folder` (absolute) in the settings and scans again; false when it is not a
  // folder or already added.
  bool addFolder(const QString& folder);
  // Forgets an added folder and scans again; false when it was not added.
  bool removeFolder(const QString& folder);
  QStringList addedFolders() const { return added_; }
  bool scanning() const;
  // The question the planner column answers now.
  LocalFitQuestion question() const;

  LocalModelsModel* tableModel() const { return model_; }
  QTableView* view() const { return view_; }
  QComboBox* gpuBox() const { return gpu_; }
  QSpinBox* contextBox() const { return context_; }
  QLabel* statusLabel() const { return status_; }
  QPushButton* openButton() const { return open_; }
  // Lists the added folders, each to forget; hidden while there are none.
  QToolButton* addedFoldersButton() const { return added_button_; }
  // "On this computer" and "Download" (the catalog).
  QTabWidget* tabs() const { return tabs_; }
  CatalogView* catalogView() const { return catalog_; }

 signals:
  // The user chose this model to open (a GGUF file or an HF folder).
  void openRequested(const QString& path);
  // A scan ended and the table shows its models.
  void scanFinished();

 protected:
  void showEvent(QShowEvent* event) override;

 private:
  QWidget* build_controls();
  QWidget* build_local_tab();
  void fill_gpus();
  std::vector<ModelPlace> places() const;
  void on_scan_started();
  void on_scan_finished();
  void show_result_summary();
  void fit_columns();
  void update_answers();
  void update_open_button();
  void open_row(int row);
  void choose_folder();
  void save_added_folders();
  void show_tab_buttons();

  ModelsPageConfig config_;
  QStringList added_;
  bool scanned_once_ = false;
  ModelScanner* scanner_;
  LocalModelsModel* model_;
  QComboBox* gpu_;
  QSpinBox* context_;
  QPushButton* rescan_;
  QPushButton* add_folder_;
  QToolButton* added_button_;
  QPushButton* open_;
  QLabel* status_;
  QTableView* view_;
  CatalogView* catalog_;
  QTabWidget* tabs_;
};

}  // namespace kvscope::ui
