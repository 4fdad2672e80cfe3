// RemotePage: "Remote", a serving engine watched live. A URL (vLLM, llama-server, or
// kvscope-cli serve), Connect / Disconnect, a status line that says what the last scrape
// was (connected, refused, timed out, not metrics, malformed, ...; failures are retried every
// second) and six charts over time: KV cache usage with the planner's line, running and
// waiting requests, preemptions, prefix-cache hit rate, tokens/s and TTFT percentiles.
// Choosing a model preset and a GPU plans that server's KV pool (engine/remote's
// plan_server_pool) at the server's own utilisation and block size when it reports them
// (vLLM's cache_config_info), 0.90 and 16 otherwise.
#pragma once

#include <QString>
#include <QVector>
#include <QWidget>

#include <optional>
#include <vector>

#include "plan/presets.h"
#include "remote/kv_prediction.h"
#include "remote/metrics_scrape.h"
#include "remote/watch_series.h"

class QComboBox;
class QLabel;
class QLineEdit;
class QPushButton;

namespace kvscope::ui {

class RemoteWatcher;
class TimeChart;

class RemotePage : public QWidget {
  Q_OBJECT

 public:
  explicit RemotePage(QWidget* parent = nullptr);

  // Seconds between scrapes of the next connectTo (default 1; tests go faster).
  void setPollInterval(double seconds);
  // Starts polling `url` every second (clears the charts); a bad URL shows in the status line.
  void connectTo(const QString& url);
  void disconnectFromServer();
  bool connected() const;
  // One scrape's result, `time` in seconds on any steady clock: what the watcher delivers,
  // and what tests feed with fixture dumps.
  void addScrape(double time, const kvscope::ScrapeResult& result);

  const WatchSeries& series() const { return series_; }
  const std::optional<PlannedPool>& plan() const { return plan_; }
  QLineEdit* urlEdit() const { return url_; }
  QPushButton* connectButton() const { return connect_; }
  QComboBox* modelBox() const { return model_; }
  QComboBox* gpuBox() const { return gpu_; }
  QLabel* statusLabel() const { return status_; }
  QLabel* serverLabel() const { return server_; }
  QVector<TimeChart*> charts() const {
    return charts_;
  }  // kv, queue, preemptions, prefix, tokens, ttft
  RemoteWatcher* watcher() const { return watcher_; }
  int goodScrapes() const { return good_; }
  int failedScrapes() const { return failed_; }

 private:
  QWidget* build_controls();
  QWidget* build_charts();
  void on_connect_clicked();
  void show_status(const ScrapeResult& result);
  void update_plan();
  void update_server_line();
  void update_charts();

  std::vector<ModelPreset> models_;
  QVector<GpuPreset> gpus_;
  RemoteWatcher* watcher_;
  WatchSeries series_;
  std::optional<PlannedPool> plan_;
  QString plan_error_;
  double interval_ = 1.0;
  int good_ = 0;
  int failed_ = 0;
  QLineEdit* url_;
  QPushButton* connect_;
  QComboBox* model_;
  QComboBox* gpu_;
  QLabel* status_;
  QLabel* server_;
  QVector<TimeChart*> charts_;
};

}  // namespace kvscope::ui
