// ModelDownload: one model file fetched over HTTP(S) with QNetworkAccessManager, the way a
// large download must go on a desktop:
//   - bytes go to DEST.part, and DEST appears only once every byte is there and the
//     sha256 (when the catalog has one) matches: the final name never holds half a file;
//   - an interrupted download (connection reset, app closed, stop()) keeps DEST.part, and
//     the next start() resumes it with an HTTP Range request, from the same object or a
//     new one after a restart; a server that ignores the Range starts it over;
//   - a file whose checksum does not match is removed (its bytes are not a prefix of the
//     right file, so there is nothing to resume), and so is the part on cancel();
//   - the free disk space is checked before the request and again once the server says
//     the length;
//   - every failure is one plain sentence in error(): HTTP status, TLS, connection,
//     disk full, checksum.
// Progress (bytes, rate over the last seconds, time left) is reported at most ~10 times a
// second. The checksum of a finished file is computed on a thread of its own, so a 5 GB
// file never blocks the GUI thread.
#pragma once

#include <QByteArray>
#include <QElapsedTimer>
#include <QFile>
#include <QObject>
#include <QPointer>
#include <QString>
#include <QUrl>

#include <deque>
#include <utility>

class QNetworkAccessManager;
class QNetworkReply;
class QThread;

namespace kvscope::ui {

struct DownloadRequest {
  QUrl url;
  QString destination;           // the final path; its folder is created
  QString sha256;                // 64 lower-case hex digits; empty: not checked
  qint64 expected_bytes = 0;     // for the disk check before the server answers (0: unknown)
  bool exact_bytes = false;      // the server's length must be expected_bytes
  int stall_timeout_ms = 60000;  // no byte for this long: the connection is given up
};

struct DownloadProgress {
  qint64 received = 0;          // bytes in the part file, resumed ones included
  qint64 total = -1;            // -1 until the server says
  double bytes_per_second = 0;  // over the last few seconds
  double seconds_left = -1;     // -1 when unknown
};

class ModelDownload : public QObject {
  Q_OBJECT

 public:
  enum class State { Idle, Downloading, Verifying, Finished, Failed, Cancelled };

  ModelDownload(DownloadRequest request, QNetworkAccessManager* network, QObject* parent = nullptr);
  // Stops without deleting the part file (a later start() resumes it).
  ~ModelDownload() override;

  // Starts or resumes. A destination already there is verified instead (its sha256 when one
  // is known, and that it is a model of its format) and finishes at once. A download is
  // renamed to the destination only after the same checks.
  void start();
  // Stops and keeps DEST.part for a later start().
  void stop();
  // Stops and removes DEST.part: nothing is left under either name.
  void cancel();

  State state() const { return state_; }
  bool running() const { return state_ == State::Downloading || state_ == State::Verifying; }
  const QString& error() const { return error_; }
  const DownloadProgress& progress() const { return progress_; }
  const DownloadRequest& request() const { return request_; }
  QString partPath() const { return request_.destination + QStringLiteral(".part"); }

  // "1.2 GB of 4.7 GB, 35.1 MB/s, 1 min 40 s left"
  static QString describe(const DownloadProgress& p);

 signals:
  void progressChanged(const kvscope::ui::DownloadProgress& progress);
  // state() is Finished, Failed (error() says why) or Cancelled.
  void finished();

 private:
  void send_request();
  void on_headers();
  void on_data();
  void on_reply_finished();
  bool check_disk(qint64 more_bytes);
  // Whether `bytes` is the catalog's size (always true when the catalog gives none).
  bool matches_catalog_size(qint64 bytes) const;
  bool open_part(bool truncate);
  void verify_and_rename();
  void on_verified(const QByteArray& sha256_hex);
  void update_rate(bool force_signal);
  void fail(const QString& why);
  void finish(State state);
  void drop_reply();
  QString kept_note() const;

  DownloadRequest request_;
  QNetworkAccessManager* network_;
  QPointer<QNetworkReply> reply_;
  QFile part_;
  QThread* hasher_ = nullptr;
  State state_ = State::Idle;
  QString error_;
  DownloadProgress progress_;
  qint64 offset_ = 0;  // bytes of the part when the request went out
  bool headers_seen_ = false;
  QElapsedTimer clock_;
  qint64 last_signal_ms_ = -1;
  std::deque<std::pair<qint64, qint64>> samples_;  // (ms, received) of the last seconds
};

}  // namespace kvscope::ui
