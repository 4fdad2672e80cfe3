// ModelDownload against a loopback HTTP server (loopback_http_server.h) serving the real
// stories260K GGUF: a full download lands under its final name with no part file; a
// connection reset mid-body keeps the prefix in NAME.part and a new download (as after a
// restart) resumes it with a Range request into identical bytes; wrong bytes fail the
// sha256 and leave nothing behind, nor does a part file that was not a prefix; 404, resets
// and a lying length are reported plainly; cancel leaves nothing under either name; the
// disk is checked before any request. `kvscope-cli pull` goes through the same downloader.
#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QNetworkAccessManager>
#include <QNetworkProxy>
#include <QProcess>
#include <QSignalSpy>
#include <QtTest>

#include <csignal>
#include <memory>

#include <sys/resource.h>

#include "loopback_http_server.h"
#include "models/model_download.h"
#include "ui_test_support.h"

namespace kvscope::ui {
namespace {

using Server = test::LoopbackHttpServer;
constexpr int kWaitMs = 15000;

QByteArray read_all(const QString& path) {
  QFile f(path);
  return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

void write_file(const QString& path, const QByteArray& bytes) {
  QFile f(path);
  QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
  QCOMPARE(f.write(bytes), bytes.size());
}

QString sha256_hex(const QByteArray& bytes) {
  return QString::fromLatin1(QCryptographicHash::hash(bytes, QCryptographicHash::Sha256).toHex());
}

// Starts `d` and waits for its end.
void run(ModelDownload& d) {
  QSignalSpy done(&d, &ModelDownload::finished);
  d.start();
  if (d.running()) QVERIFY(done.wait(kWaitMs));
  QVERIFY(!d.running());
  if (!d.error().isEmpty()) qInfo("error: %s", qPrintable(d.error()));  // as the user reads it
}

}  // namespace

class ModelDownloadTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    const QString model = test::shared_file(QStringLiteral("models/stories260K.gguf"));
    if (model.isEmpty()) QSKIP("needs models/stories260K.gguf in KVSCOPE_SHARED_DIR");
    body_ = read_all(model);
    QVERIFY(body_.size() > 1000000);
    network_.setProxy(QNetworkProxy::NoProxy);  // loopback only, whatever the environment says
  }

  void init() {
    server_ = std::make_unique<Server>(body_, QByteArrayLiteral("/org/repo/resolve/main/s.gguf"));
    dir_ = test::scratch_dir();
    dest_ = dir_ + QStringLiteral("/models/stories260K.gguf");
  }

  DownloadRequest request(const QString& sha = {}) const {
    return {.url = QUrl(QString::fromLatin1(server_->url())),
            .destination = dest_,
            .sha256 = sha.isEmpty() ? sha256_hex(body_) : sha,
            .expected_bytes = body_.size(),
            .exact_bytes = true,
            .stall_timeout_ms = 5000};
  }

  void fullDownloadLandsUnderItsNameWithNoPart() {
    ModelDownload d(request(), &network_);
    QSignalSpy progress(&d, &ModelDownload::progressChanged);
    run(d);
    QCOMPARE(d.state(), ModelDownload::State::Finished);
    QVERIFY2(d.error().isEmpty(), qPrintable(d.error()));
    QCOMPARE(read_all(dest_), body_);
    QVERIFY(!QFileInfo::exists(d.partPath()));
    QVERIFY(progress.count() >= 1);
    QCOMPARE(d.progress().received, qint64(body_.size()));
    QCOMPARE(d.progress().total, qint64(body_.size()));
    QVERIFY(!ModelDownload::describe(d.progress()).isEmpty());
  }

  // The server resets the connection (RST) after 300,000 body bytes: what arrived before
  // the reset (the kernel drops unread bytes on a reset, so up to 300,000) is kept.
  void resetMidBodyKeepsThePrefixAndRestartResumesIt() {
    constexpr qint64 kCut = 300000;
    server_->setMode(Server::Mode::CutAfter, kCut);
    qint64 kept = 0;
    {
      ModelDownload d(request(), &network_);
      run(d);
      QCOMPARE(d.state(), ModelDownload::State::Failed);
      QVERIFY2(d.error().contains(QStringLiteral("the connection to 127.0.0.1")),
               qPrintable(d.error()));
      QVERIFY(!QFileInfo::exists(dest_));
      const QByteArray part = read_all(d.partPath());
      kept = part.size();
      QVERIFY2(kept <= kCut, qPrintable(QString::number(kept)));
      QCOMPARE(part, body_.left(kept));  // a prefix of the file: worth resuming
      if (kept > 0) {  // (a reset may in principle drop all the client had not read yet)
        QVERIFY2(d.error().contains(QStringLiteral("download again to resume")),
                 qPrintable(d.error()));
      }
    }
    server_->setMode(Server::Mode::Serve);
    ModelDownload again(request(), &network_);  // a new object, as after a restart
    run(again);
    QCOMPARE(again.state(), ModelDownload::State::Finished);
    QCOMPARE(server_->lastRange(),
             kept > 0 ? "bytes=" + QByteArray::number(kept) + "-" : QByteArray());
    QCOMPARE(read_all(dest_), body_);
    QVERIFY(!QFileInfo::exists(again.partPath()));
  }

  // A part as long as the file: the server answers 416 and the part is verified and kept.
  void completePartIsVerifiedWithoutRefetching() {
    QDir().mkpath(QFileInfo(dest_).absolutePath());
    write_file(dest_ + QStringLiteral(".part"), body_);
    ModelDownload d(request(), &network_);
    run(d);
    QCOMPARE(d.state(), ModelDownload::State::Finished);
    QCOMPARE(read_all(dest_), body_);
  }

  void serverIgnoringTheRangeStartsOver() {
    QDir().mkpath(QFileInfo(dest_).absolutePath());
    write_file(dest_ + QStringLiteral(".part"), body_.left(5000));
    server_->setMode(Server::Mode::IgnoreRange);
    ModelDownload d(request(), &network_);
    run(d);
    QCOMPARE(d.state(), ModelDownload::State::Finished);
    QCOMPARE(read_all(dest_), body_);
  }

  void wrongBytesFailTheChecksumAndLeaveNothing() {
    server_->setMode(Server::Mode::WrongBytes);
    ModelDownload d(request(), &network_);
    run(d);
    QCOMPARE(d.state(), ModelDownload::State::Failed);
    QVERIFY2(d.error().contains(QStringLiteral("sha256")), qPrintable(d.error()));
    QVERIFY(!QFileInfo::exists(dest_));
    QVERIFY(!QFileInfo::exists(d.partPath()));
  }

  // A part file that is not a prefix of the file (here: garbage) resumes into a file with
  // the wrong checksum, which is removed; the next try starts over and succeeds.
  void partThatIsNoPrefixIsRemovedAfterTheChecksum() {
    QDir().mkpath(QFileInfo(dest_).absolutePath());
    write_file(dest_ + QStringLiteral(".part"), QByteArray(5000, 'x'));
    ModelDownload d(request(), &network_);
    run(d);
    QCOMPARE(d.state(), ModelDownload::State::Failed);
    QVERIFY2(d.error().contains(QStringLiteral("removed")), qPrintable(d.error()));
    QVERIFY(!QFileInfo::exists(d.partPath()));
    run(d);
    QCOMPARE(d.state(), ModelDownload::State::Finished);
    QCOMPARE(read_all(dest_), body_);
  }

  // No sha256 in the catalog (as for SmolLM2's default entry): an HTML page answered with 200
  // is not renamed to the model's name and reported done; nothing of it is kept. A file
  // already at the destination is trusted only once it reads as a model.
  void anHtmlPageIsNotAModelEvenWithoutAChecksum() {
    const QByteArray page = "<!DOCTYPE html><html><body>Log in to download</body></html>";
    Server html(page, QByteArrayLiteral("/org/repo/resolve/main/s.gguf"));
    DownloadRequest r{.url = QUrl(QString::fromLatin1(html.url())),
                      .destination = dest_,
                      .sha256 = {},
                      .expected_bytes = 0,
                      .exact_bytes = false,
                      .stall_timeout_ms = 5000};
    ModelDownload d(r, &network_);
    run(d);
    QCOMPARE(d.state(), ModelDownload::State::Failed);
    QVERIFY2(d.error().contains(QStringLiteral("HTML page (%1 bytes)").arg(page.size())),
             qPrintable(d.error()));
    QVERIFY(!QFileInfo::exists(dest_));
    QVERIFY(!QFileInfo::exists(d.partPath()));

    QFile f(dest_);  // the same page, left at the destination by an older version
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(page);
    f.close();
    ModelDownload again(r, &network_);
    run(again);
    QCOMPARE(again.state(), ModelDownload::State::Failed);
    QVERIFY2(again.error().contains(QStringLiteral("is already there but is not a model")),
             qPrintable(again.error()));
    QCOMPARE(read_all(dest_), page);  // not deleted: the user's file
  }

  // No Content-Length and a clean close after 300,000 bytes: nothing in the reply says it was
  // cut, so only the catalog's size does. The part is kept for a resume.
  void aReplyWithoutLengthEndingShortOfTheCatalogsSizeIsIncomplete() {
    server_->setMode(Server::Mode::EndAfter, 300000);
    DownloadRequest r = request();
    r.sha256 = QString();  // as for a catalog entry without one: the header alone reads fine
    ModelDownload d(r, &network_);
    run(d);
    QCOMPARE(d.state(), ModelDownload::State::Failed);
    QVERIFY2(d.error().contains(QStringLiteral("the catalog's file is")), qPrintable(d.error()));
    QVERIFY(!QFileInfo::exists(dest_));
    QCOMPARE(QFileInfo(d.partPath()).size(), qint64(300000));
  }

  // Chunked framing carries no length either: whole (the closing 0-chunk came) it lands; cut
  // short with a clean close (no closing chunk) it is incomplete, whatever the bytes so far.
  void aChunkedReplyLandsWhenWholeAndIsIncompleteWhenCut() {
    server_->setMode(Server::Mode::Chunked);
    DownloadRequest r = request();
    r.sha256 = QString();  // as for a catalog entry without one
    ModelDownload whole(r, &network_);
    run(whole);
    QCOMPARE(whole.state(), ModelDownload::State::Finished);
    QVERIFY2(whole.error().isEmpty(), qPrintable(whole.error()));
    QCOMPARE(read_all(dest_), body_);

    QFile::remove(dest_);
    server_->setMode(Server::Mode::Chunked, 300000);
    ModelDownload cut(r, &network_);
    run(cut);
    QCOMPARE(cut.state(), ModelDownload::State::Failed);
    QVERIFY(!QFileInfo::exists(dest_));
  }

  // A part as long as the file but all zeros (a crashed write that extended the file): the
  // server answers 416 to its Range, and the part, read as a model, is not one. With no
  // checksum to catch it, only that check does: it is removed and the error says what it was.
  void aFullLengthPartOfZerosAnswered416IsNotAModel() {
    QDir().mkpath(QFileInfo(dest_).absolutePath());
    write_file(dest_ + QStringLiteral(".part"), QByteArray(body_.size(), '\0'));
    DownloadRequest r = request();
    r.sha256 = QString();
    ModelDownload d(r, &network_);
    run(d);
    QCOMPARE(d.state(), ModelDownload::State::Failed);
    QVERIFY2(d.error().contains(QStringLiteral("zeros")), qPrintable(d.error()));
    QCOMPARE(server_->lastRange(), "bytes=" + QByteArray::number(body_.size()) + "-");
    QVERIFY(!QFileInfo::exists(dest_));
    QVERIFY(!QFileInfo::exists(d.partPath()));
  }

  void notFoundIsReportedWithTheStatus() {
    server_->setMode(Server::Mode::NotFound);
    ModelDownload d(request(), &network_);
    run(d);
    QCOMPARE(d.state(), ModelDownload::State::Failed);
    QVERIFY2(d.error().contains(QStringLiteral("HTTP 404")), qPrintable(d.error()));
    QVERIFY(!QFileInfo::exists(dest_));
    QVERIFY(!QFileInfo::exists(d.partPath()));
  }

  void refusedConnectionIsReported() {
    DownloadRequest r = request();
    server_.reset();  // nothing listens on that port any more
    ModelDownload d(r, &network_);
    run(d);
    QCOMPARE(d.state(), ModelDownload::State::Failed);
    QVERIFY2(d.error().contains(QStringLiteral("the connection to 127.0.0.1 failed")),
             qPrintable(d.error()));
  }

  void stalledConnectionIsGivenUpAndTheFileKept() {
    server_->setMode(Server::Mode::StallAfter, 100000);
    DownloadRequest r = request();
    r.stall_timeout_ms = 300;
    ModelDownload d(r, &network_);
    run(d);
    QCOMPARE(d.state(), ModelDownload::State::Failed);
    QVERIFY2(d.error().startsWith(QStringLiteral("no data from 127.0.0.1")), qPrintable(d.error()));
    QVERIFY2(d.error().contains(QStringLiteral("download again to resume")), qPrintable(d.error()));
  }

  void tlsFailureIsReportedAsSuch() {
    DownloadRequest r = request();
    r.url.setScheme(QStringLiteral("https"));  // the server speaks plain HTTP
    ModelDownload d(r, &network_);
    run(d);
    QCOMPARE(d.state(), ModelDownload::State::Failed);
    QVERIFY2(d.error().contains(QStringLiteral("secure connection (TLS)")), qPrintable(d.error()));
    QVERIFY(!QFileInfo::exists(d.partPath()));
  }

  void lengthOtherThanTheCatalogsIsRefused() {
    DownloadRequest r = request();
    r.expected_bytes = body_.size() + 1;
    ModelDownload d(r, &network_);
    run(d);
    QCOMPARE(d.state(), ModelDownload::State::Failed);
    QVERIFY2(d.error().contains(QStringLiteral("the catalog says")), qPrintable(d.error()));
    QVERIFY(!QFileInfo::exists(dest_));
  }

  void cancelLeavesNothingUnderEitherName() {
    server_->setMode(Server::Mode::Slow);
    ModelDownload d(request(), &network_);
    QSignalSpy done(&d, &ModelDownload::finished);
    connect(&d, &ModelDownload::progressChanged, &d, [&d] {
      if (d.progress().received > 0) d.cancel();
    });
    d.start();
    QVERIFY(done.wait(kWaitMs));
    QCOMPARE(d.state(), ModelDownload::State::Cancelled);
    QVERIFY(!QFileInfo::exists(dest_));
    QVERIFY(!QFileInfo::exists(d.partPath()));
  }

  // A write that fails mid-download (here: the process's file size limit, as a full disk
  // would fail it) is reported as such; what was written is kept for a resume.
  void failedWriteIsReportedAndThePrefixKept() {
    rlimit old{};
    QVERIFY(getrlimit(RLIMIT_FSIZE, &old) == 0);
    const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);  // EFBIG instead of a signal
    rlimit small = old;
    small.rlim_cur = 200000;
    QVERIFY(setrlimit(RLIMIT_FSIZE, &small) == 0);
    ModelDownload d(request(), &network_);
    run(d);
    setrlimit(RLIMIT_FSIZE, &old);
    std::signal(SIGXFSZ, old_handler);
    QCOMPARE(d.state(), ModelDownload::State::Failed);
    QVERIFY2(d.error().contains(QStringLiteral("is the disk full?")), qPrintable(d.error()));
    const QByteArray part = read_all(d.partPath());
    QVERIFY(part.size() <= 200000);
    QCOMPARE(part, body_.left(part.size()));
    QVERIFY(!QFileInfo::exists(dest_));
  }

  void diskSpaceIsCheckedBeforeAnyRequest() {
    DownloadRequest r = request();
    r.expected_bytes = qint64{1} << 52;  // 4 PiB
    r.exact_bytes = false;
    ModelDownload d(r, &network_);
    run(d);
    QCOMPARE(d.state(), ModelDownload::State::Failed);
    QVERIFY2(d.error().contains(QStringLiteral("not enough disk space")), qPrintable(d.error()));
    QCOMPARE(server_->requests(), 0);
  }

  void fileAlreadyThereIsVerifiedNotFetched() {
    QDir().mkpath(QFileInfo(dest_).absolutePath());
    write_file(dest_, body_);
    ModelDownload d(request(), &network_);
    run(d);
    QCOMPARE(d.state(), ModelDownload::State::Finished);
    QCOMPARE(server_->requests(), 0);
    ModelDownload wrong(request(QString(64, QLatin1Char('0'))), &network_);
    run(wrong);
    QCOMPARE(wrong.state(), ModelDownload::State::Failed);
    QVERIFY2(wrong.error().contains(QStringLiteral("move it away")), qPrintable(wrong.error()));
    QCOMPARE(read_all(dest_), body_);  // a file the user has is never deleted
  }

  // `kvscope-cli pull NAME:QUANT` with the catalog's endpoint pointed at the server.
  void cliPullDownloadsChecksAndPrintsThePath() {
    const QString cli =
        qEnvironmentVariable("KVSCOPE_BINARY_DIR") + QStringLiteral("/bin/kvscope-cli");
    if (!QFileInfo(cli).isExecutable()) QSKIP("kvscope-cli is not built");
    const QString catalog = dir_ + QStringLiteral("/catalog.json");
    write_file(catalog, QStringLiteral(R"({"models": [{"name": "tiny", "display_name": "Tiny",
      "architecture": "llama", "n_params": 292000, "n_layers": 5, "dim": 64, "n_heads": 8,
      "n_kv_heads": 4, "head_dim": 8, "ffn_dim": 172, "vocab_size": 512, "context_length": 128,
      "sliding_window": 0, "tied_embeddings": true, "repo": "org/repo",
      "files": [{"quant": "F32", "file": "s.gguf", "bytes": %1, "exact_bytes": true,
                 "sha256": "%2"}]}]})")
                            .arg(body_.size())
                            .arg(sha256_hex(body_))
                            .toUtf8());
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("HF_ENDPOINT"), QString::fromLatin1(server_->endpoint()));
    for (const char* v : {"http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy"}) {
      env.remove(QString::fromLatin1(v));
    }
    p.setProcessEnvironment(env);
    server_->setMode(Server::Mode::CutAfter, 200000);
    const QStringList args{QStringLiteral("pull"),      QStringLiteral("tiny:f32"),
                           QStringLiteral("--catalog"), catalog,
                           QStringLiteral("--dir"),     dir_,
                           QStringLiteral("--vram"),    QStringLiteral("1GiB")};
    p.start(cli, args);
    QTRY_VERIFY_WITH_TIMEOUT(p.state() == QProcess::NotRunning, kWaitMs);
    QCOMPARE(p.exitCode(), 1);  // cut: the part is kept
    QVERIFY(QString::fromUtf8(p.readAllStandardError())
                .contains(QStringLiteral("the connection to 127.0.0.1")));
    const qint64 kept = QFileInfo(dir_ + QStringLiteral("/s.gguf.part")).size();
    server_->setMode(Server::Mode::Serve);
    p.start(cli, args);
    QTRY_VERIFY_WITH_TIMEOUT(p.state() == QProcess::NotRunning, kWaitMs);
    const QString err = QString::fromUtf8(p.readAllStandardError());
    QVERIFY2(p.exitCode() == 0, qPrintable(err));
    QCOMPARE(server_->lastRange(),  // resumed
             kept > 0 ? "bytes=" + QByteArray::number(kept) + "-" : QByteArray());
    QCOMPARE(QString::fromUtf8(p.readAllStandardOutput()).trimmed(),
             dir_ + QStringLiteral("/s.gguf"));
    QVERIFY2(err.contains(QStringLiteral("sha256 checked")), qPrintable(err));
    QVERIFY2(err.contains(QStringLiteral("fits")), qPrintable(err));
    QCOMPARE(read_all(dir_ + QStringLiteral("/s.gguf")), body_);
  }

 private:
  QByteArray body_;
  QNetworkAccessManager network_;
  std::unique_ptr<Server> server_;
  QString dir_;
  QString dest_;
};

}  // namespace kvscope::ui

QTEST_GUILESS_MAIN(kvscope::ui::ModelDownloadTest)
#include "model_download_test.moc"
