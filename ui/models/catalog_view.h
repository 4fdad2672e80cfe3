// CatalogView: the Models page's "Download" tab. The download catalog's files with the
// planner's answer for the page's GPU and context before download (CatalogTableModel);
// Download fetches the selected one into the models folder (ModelDownload: progress with
// rate and time left, Cancel, resume after an interruption or a restart, sha256 checked),
// and Open (or a double-click) opens a downloaded one in the chat. One download at a time.
#pragma once

#include <QString>
#include <QWidget>

#include <vector>

#include "model/catalog/model_catalog.h"
#include "plan/local_model_fit.h"

class QLabel;
class QNetworkAccessManager;
class QProgressBar;
class QPushButton;
class QTableView;

namespace kvscope::ui {

class CatalogTableModel;
class ModelDownload;

class CatalogView : public QWidget {
  Q_OBJECT

 public:
  // `catalog_error`: why the catalog is empty (shown instead of the table).
  CatalogView(std::vector<CatalogModel> catalog, const QString& models_dir,
              const QString& catalog_error, QWidget* parent = nullptr);
  ~CatalogView() override;

  void setQuestion(const LocalFitQuestion& question);
  // Where files come from: $HF_ENDPOINT when set, else https://huggingface.co.
  void setEndpoint(const QString& endpoint) { endpoint_ = endpoint; }

  // Starts downloading a row (no-op while another download runs or for a model the
  // engine does not run); the selected row for the buttons.
  void download(int row);
  void cancel();

  CatalogTableModel* tableModel() const { return model_; }
  QTableView* view() const { return view_; }
  QPushButton* downloadButton() const { return download_; }
  QPushButton* cancelButton() const { return cancel_; }
  QPushButton* openButton() const { return open_; }
  QProgressBar* progressBar() const { return progress_; }
  QLabel* statusLabel() const { return status_; }
  ModelDownload* activeDownload() const { return active_; }
  QNetworkAccessManager* network() const { return network_; }

 signals:
  void openRequested(const QString& path);
  // A file finished downloading (and its checksum matched).
  void downloaded(const QString& path);

 private:
  QWidget* build_buttons();
  int current_row() const;
  void update_buttons();
  void on_progress();
  void on_finished();
  void fit_columns();

  CatalogTableModel* model_;
  QNetworkAccessManager* network_;
  QString endpoint_;
  ModelDownload* active_ = nullptr;
  int active_row_ = -1;
  QTableView* view_;
  QProgressBar* progress_;
  QLabel* status_;
  QPushButton* download_;
  QPushButton* cancel_;
  QPushButton* open_;
};

}  // namespace kvscope::ui
