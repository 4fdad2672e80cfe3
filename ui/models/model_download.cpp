#include "models/model_download.h"

#include <QCryptographicHash>
#include <QDir>
#include <QFileInfo>
#include <QLocale>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QNetworkRequest>
#include <QRegularExpression>
#include <QStorageInfo>
#include <QThread>

#include <cmath>
#include <memory>
#include <string>

#include "model/discovery/model_file_check.h"

namespace kvscope::ui {

namespace {

constexpr qint64 kSignalEveryMs = 100;
constexpr qint64 kRateWindowMs = 3000;
// Room left on the disk beyond the file: a full disk breaks more than this download.
constexpr qint64 kDiskMargin = qint64{64} << 20;

QString bytes_text(qint64 bytes) {
  return QLocale::c().formattedDataSize(bytes, 1, QLocale::DataSizeSIFormat);
}

QString duration_text(double seconds) {
  const auto s = static_cast<qint64>(std::ceil(seconds));
  if (s < 60) return ModelDownload::tr("%1 s").arg(s);
  if (s < 3600) return ModelDownload::tr("%1 min %2 s").arg(s / 60).arg(s % 60);
  return ModelDownload::tr("%1 h %2 min").arg(s / 3600).arg((s % 3600) / 60);
}

// "bytes START-END/TOTAL" -> {START, TOTAL}; TOTAL -1 for "*". {-1, -1} when malformed.
std::pair<qint64, qint64> parse_content_range(const QByteArray& value) {
  static const QRegularExpression re(QStringLiteral(R"(^bytes\s+(\d+)-(\d+)/(\d+|\*)$)"));
  const auto m = re.match(QString::fromLatin1(value).trimmed());
  if (!m.hasMatch()) return {-1, -1};
  const qint64 total = m.captured(3) == QStringLiteral("*") ? -1 : m.captured(3).toLongLong();
  return {m.captured(1).toLongLong(), total};
}

// "bytes */TOTAL" of a 416 answer.
qint64 unsatisfied_range_total(const QByteArray& value) {
  static const QRegularExpression re(QStringLiteral(R"(^bytes\s+\*/(\d+)$)"));
  const auto m = re.match(QString::fromLatin1(value).trimmed());
  return m.hasMatch() ? m.captured(1).toLongLong() : -1;
}

QByteArray sha256_of_file(const QString& path) {
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) return {};
  QCryptographicHash hash(QCryptographicHash::Sha256);
  if (!hash.addData(&f)) return {};
  return hash.result().toHex();
}

}  // namespace

ModelDownload::ModelDownload(DownloadRequest request, QNetworkAccessManager* network,
                             QObject* parent)
    : QObject(parent), request_(std::move(request)), network_(network) {}

ModelDownload::~ModelDownload() {
  drop_reply();
  part_.close();
  if (hasher_ != nullptr) hasher_->wait();  // reads the part file; bounded by its size
}

void ModelDownload::start() {
  if (running()) return;
  error_.clear();
  progress_ = {};
  samples_.clear();
  headers_seen_ = false;
  clock_.start();
  last_signal_ms_ = -1;
  const QFileInfo dest(request_.destination);
  if (!QDir().mkpath(dest.absolutePath())) {
    fail(tr("cannot create the folder %1").arg(QDir::toNativeSeparators(dest.absolutePath())));
    return;
  }
  if (dest.exists()) {  // downloaded before: check it, fetch nothing
    progress_.received = progress_.total = dest.size();
    verify_and_rename();
    return;
  }
  offset_ = QFileInfo(partPath()).exists() ? QFileInfo(partPath()).size() : 0;
  progress_.received = offset_;
  if (request_.expected_bytes > 0 && !check_disk(request_.expected_bytes - offset_)) return;
  state_ = State::Downloading;
  send_request();
}

void ModelDownload::send_request() {
  QNetworkRequest req(request_.url);
  req.setAttribute(QNetworkRequest::RedirectPolicyAttribute,
                   QNetworkRequest::NoLessSafeRedirectPolicy);
  req.setTransferTimeout(request_.stall_timeout_ms);
  req.setHeader(QNetworkRequest::UserAgentHeader, QByteArrayLiteral("KVScope"));
  // The bytes as stored: a compressed transfer would make the lengths and ranges lie.
  req.setRawHeader("Accept-Encoding", "identity");
  if (offset_ > 0) req.setRawHeader("Range", "bytes=" + QByteArray::number(offset_) + "-");
  reply_ = network_->get(req);
  connect(reply_, &QNetworkReply::metaDataChanged, this, &ModelDownload::on_headers);
  connect(reply_, &QNetworkReply::readyRead, this, &ModelDownload::on_data);
  connect(reply_, &QNetworkReply::finished, this, &ModelDownload::on_reply_finished);
}

// The final response's status and lengths (redirects answer first and are followed).
void ModelDownload::on_headers() {
  if (!reply_ || headers_seen_) return;
  const int status = reply_->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
  if (status >= 300 && status < 400) return;   // a redirect being followed
  if (status >= 400 && status != 416) return;  // reported when the reply finishes
  headers_seen_ = true;
  if (status == 416) {
    // The part is as long as the file (or longer): nothing left to fetch.
    const qint64 total = unsatisfied_range_total(reply_->rawHeader("Content-Range"));
    if (total >= 0 && total == offset_) {
      progress_.total = total;
      return;  // on_reply_finished verifies it
    }
    QFile::remove(partPath());
    fail(
        tr("the partial file was longer than the server's file; it was removed, download "
           "again to start over"));
    return;
  }
  qint64 total = -1;
  bool truncate = offset_ == 0;
  if (status == 206) {
    const auto [start, range_total] = parse_content_range(reply_->rawHeader("Content-Range"));
    if (start != offset_) {
      fail(tr("the server resumed at byte %1 instead of %2").arg(start).arg(offset_));
      return;
    }
    total = range_total;
  } else {  // 200: the whole file, whatever was asked
    truncate = true;
    offset_ = 0;
    const QVariant length = reply_->header(QNetworkRequest::ContentLengthHeader);
    if (length.isValid()) total = length.toLongLong();
  }
  progress_.total = total;
  progress_.received = offset_;
  if (request_.exact_bytes && total >= 0 && total != request_.expected_bytes) {
    fail(tr("the server's file is %1 bytes, the catalog says %2; not downloaded")
             .arg(total)
             .arg(request_.expected_bytes));
    return;
  }
  if (total >= 0 && !check_disk(total - offset_)) return;
  open_part(truncate);
}

bool ModelDownload::open_part(bool truncate) {
  part_.setFileName(partPath());
  // Unbuffered: each network chunk goes to write(2) as it comes, so a failure (disk full)
  // is seen at once with the system's reason.
  const QIODevice::OpenMode mode = QIODevice::WriteOnly | QIODevice::Unbuffered |
                                   (truncate ? QIODevice::Truncate : QIODevice::Append);
  if (!part_.open(mode)) {
    fail(tr("cannot write %1: %2").arg(QDir::toNativeSeparators(partPath()), part_.errorString()));
    return false;
  }
  return true;
}

void ModelDownload::on_data() {
  if (!reply_ || state_ != State::Downloading) return;
  if (!part_.isOpen()) {
    reply_->readAll();  // a redirect's or an error page's body
    return;
  }
  const QByteArray data = reply_->readAll();
  const qint64 written = part_.write(data);
  if (written != data.size()) {
    // A short write sets no error: the disk (or the file size limit) took only part of it.
    const QString why = part_.error() != QFileDevice::NoError
                            ? part_.errorString()
                            : tr("only %1 of %2 bytes were written").arg(written).arg(data.size());
    part_.close();
    fail(tr("cannot write %1 (is the disk full?): %2")
             .arg(QDir::toNativeSeparators(partPath()), why) +
         kept_note());
    return;
  }
  progress_.received += data.size();
  update_rate(false);
}

void ModelDownload::on_reply_finished() {
  if (!reply_ || state_ != State::Downloading) return;
  const QNetworkReply::NetworkError code = reply_->error();
  const int status = reply_->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
  const QString host = reply_->url().host();
  const QString detail = reply_->errorString();
  if (part_.isOpen()) {
    if (reply_->isOpen()) part_.write(reply_->readAll());
    part_.close();
  }
  drop_reply();
  if (status == 416 && progress_.total >= 0 && progress_.total == offset_) {
    progress_.received = offset_;  // the part held the whole file already
    verify_and_rename();
    return;
  }
  if (status >= 400) {
    fail(tr("the server answered HTTP %1 for %2").arg(status).arg(request_.url.toString()));
    return;
  }
  if (code == QNetworkReply::SslHandshakeFailedError) {
    fail(tr("the secure connection (TLS) to %1 failed: %2").arg(host, detail));
    return;
  }
  // The transfer timeout (stall_timeout_ms): our own stop / cancel disconnect the reply first.
  if (code == QNetworkReply::OperationCanceledError) {
    fail(tr("no data from %1 for %2 s; gave up after %3")
             .arg(host)
             .arg(request_.stall_timeout_ms / 1000.0)
             .arg(bytes_text(progress_.received)) +
         kept_note());
    return;
  }
  if (code != QNetworkReply::NoError) {
    fail(tr("the connection to %1 failed after %2: %3")
             .arg(host, bytes_text(progress_.received), detail) +
         kept_note());
    return;
  }
  if (progress_.total >= 0 && progress_.received != progress_.total) {
    fail(tr("the connection to %1 closed after %2 of %3")
             .arg(host, bytes_text(progress_.received), bytes_text(progress_.total)) +
         kept_note());
    return;
  }
  // A reply with no length (chunked, or ended by closing the connection) is whole only at the
  // catalog's size: exact where it is known, else within its 3 significant digits.
  if (!matches_catalog_size(progress_.received)) {
    fail(tr("the connection to %1 ended after %2, but the catalog's file is %3")
             .arg(host, bytes_text(progress_.received), bytes_text(request_.expected_bytes)) +
         kept_note());
    return;
  }
  update_rate(true);
  verify_and_rename();
}

// The file's sha256 on a thread of its own, then the rename (or the verdict on a file that
// was already there).
void ModelDownload::verify_and_rename() {
  state_ = State::Verifying;
  const bool existing = QFileInfo::exists(request_.destination);
  const QString path = existing ? request_.destination : partPath();
  if (request_.sha256.isEmpty()) {
    on_verified({});
    return;
  }
  auto digest = std::make_shared<QByteArray>();
  hasher_ = QThread::create([path, digest] { *digest = sha256_of_file(path); });
  connect(hasher_, &QThread::finished, this, [this, digest] {
    hasher_->deleteLater();
    hasher_ = nullptr;
    on_verified(*digest);
  });
  hasher_->start();
}

void ModelDownload::on_verified(const QByteArray& sha256_hex) {
  if (state_ != State::Verifying) return;  // cancelled meanwhile
  const bool existing = QFileInfo::exists(request_.destination);
  if (!request_.sha256.isEmpty() && sha256_hex != request_.sha256.toLatin1()) {
    const QString got = sha256_hex.isEmpty() ? tr("an unreadable file") : QString(sha256_hex);
    if (existing) {
      fail(tr("%1 is already there but is not the catalog's file (sha256 %2, expected %3); "
              "move it away to download it")
               .arg(QDir::toNativeSeparators(request_.destination), got, request_.sha256));
      return;
    }
    QFile::remove(partPath());  // wrong bytes: nothing in it is worth resuming
    fail(tr("the downloaded file's sha256 is %1, the catalog's is %2; the file was removed")
             .arg(got, request_.sha256));
    return;
  }
  // Without a sha256 (or with one, for a catalog that names the wrong file) the bytes must
  // at least be a model of the destination's format: an HTML page answered with 200, a cut
  // body or a part of zeros is not.
  const QString path = existing ? request_.destination : partPath();
  const std::string problem = model_file_problem(
      path.toStdString(), QFileInfo(request_.destination).fileName().toStdString());
  if (!problem.empty()) {
    if (existing) {
      fail(tr("%1 is already there but is not a model: %2; move it away to download it")
               .arg(QDir::toNativeSeparators(request_.destination),
                    QString::fromStdString(problem)));
      return;
    }
    QFile::remove(partPath());
    fail(tr("the server sent %1, not the model; nothing was kept")
             .arg(QString::fromStdString(problem)));
    return;
  }
  if (!existing && !QFile::rename(partPath(), request_.destination)) {
    fail(tr("cannot rename %1 to %2")
             .arg(QDir::toNativeSeparators(partPath()),
                  QDir::toNativeSeparators(request_.destination)));
    return;
  }
  progress_.received = QFileInfo(request_.destination).size();
  progress_.total = progress_.received;
  progress_.seconds_left = 0;
  finish(State::Finished);
}

bool ModelDownload::matches_catalog_size(qint64 bytes) const {
  const qint64 want = request_.expected_bytes;
  if (want <= 0) return true;
  if (request_.exact_bytes) return bytes == want;
  return std::abs(bytes - want) <= want / 200 + 1;  // 3 significant digits: within 0.5%
}

bool ModelDownload::check_disk(qint64 more_bytes) {
  const QStorageInfo disk(QFileInfo(request_.destination).absolutePath());
  const qint64 free = disk.bytesAvailable();
  if (free >= 0 && more_bytes + kDiskMargin > free) {
    fail(tr("not enough disk space in %1: the download needs %2 more, %3 is free")
             .arg(QDir::toNativeSeparators(disk.rootPath()), bytes_text(more_bytes),
                  bytes_text(free)));
    return false;
  }
  return true;
}

void ModelDownload::update_rate(bool force_signal) {
  const qint64 now = clock_.elapsed();
  samples_.emplace_back(now, progress_.received);
  while (samples_.size() > 2 && now - samples_.front().first > kRateWindowMs) samples_.pop_front();
  const auto& [t0, b0] = samples_.front();
  if (now > t0) {
    progress_.bytes_per_second =
        static_cast<double>(progress_.received - b0) * 1000.0 / static_cast<double>(now - t0);
  }
  progress_.seconds_left =
      progress_.total >= 0 && progress_.bytes_per_second > 0
          ? static_cast<double>(progress_.total - progress_.received) / progress_.bytes_per_second
          : -1;
  if (force_signal || last_signal_ms_ < 0 || now - last_signal_ms_ >= kSignalEveryMs) {
    last_signal_ms_ = now;
    emit progressChanged(progress_);
  }
}

QString ModelDownload::describe(const DownloadProgress& p) {
  QString text = p.total >= 0 ? tr("%1 of %2").arg(bytes_text(p.received), bytes_text(p.total))
                              : bytes_text(p.received);
  if (p.bytes_per_second > 0)
    text += tr(", %1/s").arg(bytes_text(static_cast<qint64>(p.bytes_per_second)));
  if (p.seconds_left > 0) text += tr(", %1 left").arg(duration_text(p.seconds_left));
  return text;
}

QString ModelDownload::kept_note() const {
  const QFileInfo part(partPath());
  if (!part.exists() || part.size() == 0) return {};
  return tr("; %1 kept in %2, download again to resume")
      .arg(bytes_text(part.size()), part.fileName());
}

void ModelDownload::stop() {
  if (!running()) return;
  drop_reply();
  part_.close();
  finish(State::Cancelled);
}

void ModelDownload::cancel() {
  const bool was_running = running();
  drop_reply();
  part_.close();
  QFile::remove(partPath());
  if (was_running) finish(State::Cancelled);
}

void ModelDownload::drop_reply() {
  if (!reply_) return;
  QNetworkReply* r = reply_;
  reply_ = nullptr;
  r->disconnect(this);
  r->abort();
  r->deleteLater();
}

void ModelDownload::fail(const QString& why) {
  drop_reply();
  part_.close();
  error_ = why;
  finish(State::Failed);
}

void ModelDownload::finish(State state) {
  state_ = state;
  emit finished();
}

}  // namespace kvscope::ui
