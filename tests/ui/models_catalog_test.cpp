// The Models page's Download tab: the catalog's files with the planner's answer for the
// page's GPU before download (the same answer_catalog_fit gives), models the engine does
// not run greyed as not supported yet, Download fetching the selected file from a loopback
// server (the real stories260K GGUF) into HOME/.cache/kvscope/models with progress, the
// first tab then listing it, Open asking to open it in the chat, and Cancel leaving nothing.
#include <QComboBox>
#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QGuiApplication>
#include <QLabel>
#include <QNetworkAccessManager>
#include <QNetworkProxy>
#include <QProgressBar>
#include <QPushButton>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTableView>
#include <QtTest>

#include <algorithm>
#include <cmath>

#include "loopback_http_server.h"
#include "models/catalog_table_model.h"
#include "models/catalog_view.h"
#include "models/local_models_model.h"
#include "models/model_download.h"
#include "models/models_page.h"
#include "plan/catalog_fit.h"
#include "ui_test_support.h"
#include "window/app_palette.h"

namespace kvscope::ui {
namespace {

using Server = test::LoopbackHttpServer;
using Col = CatalogTableModel::Column;
constexpr std::int64_t kMiB = 1024 * 1024;
constexpr int kWaitMs = 15000;

GpuPreset gpu(const char* slug, const char* name, std::int64_t bytes) {
  GpuPreset g;
  g.slug = slug;
  g.name = name;
  g.memory_bytes = bytes;
  return g;
}

// stories260K's shape as a catalog entry, and an architecture the engine does not run.
std::vector<CatalogModel> test_catalog(const QByteArray& body) {
  const QString sha =
      QString::fromLatin1(QCryptographicHash::hash(body, QCryptographicHash::Sha256).toHex());
  const QString text = QStringLiteral(R"({"models": [
    {"name": "stories", "display_name": "Stories 260K", "architecture": "llama",
     "n_params": 292000, "n_layers": 5, "dim": 64, "n_heads": 8, "n_kv_heads": 4,
     "head_dim": 8, "ffn_dim": 172, "vocab_size": 512, "context_length": 128,
     "sliding_window": 0, "tied_embeddings": true, "repo": "org/repo",
     "files": [{"quant": "F32", "file": "s.gguf", "bytes": %1, "exact_bytes": true,
                "sha256": "%2"}]},
    {"name": "phi-like", "display_name": "Phi Like", "architecture": "phi3",
     "n_params": 3821079552, "n_layers": 32, "dim": 3072, "n_heads": 32, "n_kv_heads": 32,
     "head_dim": 96, "ffn_dim": 8192, "vocab_size": 32064, "context_length": 131072,
     "sliding_window": 0, "tied_embeddings": false, "repo": "org/phi",
     "files": [{"quant": "Q4_K_M", "file": "p.gguf", "bytes": 2390000000}]}]})")
                           .arg(body.size())
                           .arg(sha);
  return parse_model_catalog(text.toStdString(), "test catalog");
}

// WCAG's contrast ratio of two colours (1 to 21).
double contrast(const QColor& a, const QColor& b) {
  const auto luminance = [](const QColor& c) {
    const auto channel = [](double v) {
      return v <= 0.03928 ? v / 12.92 : std::pow((v + 0.055) / 1.055, 2.4);
    };
    return 0.2126 * channel(c.redF()) + 0.7152 * channel(c.greenF()) + 0.0722 * channel(c.blueF());
  };
  const double la = luminance(a), lb = luminance(b);
  return (std::max(la, lb) + 0.05) / (std::min(la, lb) + 0.05);
}

QString cell(const CatalogTableModel& m, int row, int column) {
  return m.index(row, column).data().toString();
}

}  // namespace

class ModelsCatalogTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    const QString model = test::shared_file(QStringLiteral("models/stories260K.gguf"));
    if (model.isEmpty()) QSKIP("needs models/stories260K.gguf in KVSCOPE_SHARED_DIR");
    QFile f(model);
    QVERIFY(f.open(QIODevice::ReadOnly));
    body_ = f.readAll();
    QCoreApplication::setOrganizationName(QStringLiteral("kvscope-test-catalog"));
  }

  void init() {
    server_ = std::make_unique<Server>(body_, QByteArrayLiteral("/org/repo/resolve/main/s.gguf"));
    home_ = test::scratch_dir();
    ModelsPageConfig config{
        home_,
        [](std::string_view) { return std::optional<std::string>(); },
        {gpu("tiny", "Tiny GPU", 1 * kMiB), gpu("big", "Big GPU", 24 * 1024 * kMiB)},
        test_catalog(body_),
        {}};
    page_ = std::make_unique<ModelsPage>(std::move(config));
    page_->resize(1200, 600);
    catalog_ = page_->catalogView();
    catalog_->setEndpoint(QString::fromLatin1(server_->endpoint()));
    catalog_->network()->setProxy(QNetworkProxy::NoProxy);
    page_->tabs()->setCurrentWidget(catalog_);
  }

  void cleanup() { page_.reset(); }

  void answersBeforeDownloadForTheChosenGpu() {
    const CatalogTableModel& m = *catalog_->tableModel();
    QCOMPARE(m.rowCount(), 2);
    page_->gpuBox()->setCurrentIndex(1);  // Big GPU
    const auto answer = answer_catalog_fit(*m.rowAt(0).model, *m.rowAt(0).file, page_->question());
    QCOMPARE(cell(m, 0, Col::kPlan), LocalModelsModel::describeAnswer(answer));
    QVERIFY2(cell(m, 0, Col::kPlan).startsWith(QStringLiteral("fits 128 tokens")),
             qPrintable(cell(m, 0, Col::kPlan)));
    page_->gpuBox()->setCurrentIndex(0);  // 1 MiB: not even the weights
    QVERIFY2(cell(m, 0, Col::kPlan).startsWith(QStringLiteral("short by")),
             qPrintable(cell(m, 0, Col::kPlan)));
    QCOMPARE(cell(m, 1, Col::kPlan), QStringLiteral("not supported yet"));
    QVERIFY(m.index(1, Col::kModel).data(Qt::ForegroundRole).isValid());  // greyed
    catalog_->view()->setCurrentIndex(m.index(1, 0));
    QVERIFY(!catalog_->downloadButton()->isEnabled());
    catalog_->view()->setCurrentIndex(m.index(0, 0));
    QVERIFY(catalog_->downloadButton()->isEnabled());
    QVERIFY(!catalog_->openButton()->isEnabled());
  }

  void downloadLandsInTheModelsFolderAndOpens() {
    page_->show();
    QTRY_VERIFY_WITH_TIMEOUT(!page_->scanning(), kWaitMs);
    const CatalogTableModel& m = *catalog_->tableModel();
    catalog_->view()->setCurrentIndex(m.index(0, 0));
    QSignalSpy downloaded(catalog_, &CatalogView::downloaded);
    QSignalSpy scanned(page_.get(), &ModelsPage::scanFinished);
    catalog_->downloadButton()->click();
    QVERIFY(catalog_->activeDownload() != nullptr);
    QVERIFY(catalog_->cancelButton()->isEnabled());
    if (const QString dir = qEnvironmentVariable("KVSCOPE_TEST_SHOTS"); !dir.isEmpty()) {
      QTRY_VERIFY(catalog_->progressBar()->value() > 0 || !downloaded.isEmpty());
      page_->grab().save(dir + QStringLiteral("/models-download-progress.png"));
    }
    QVERIFY(downloaded.wait(kWaitMs));
    const QString dest = home_ + QStringLiteral("/.cache/kvscope/models/s.gguf");
    QCOMPARE(downloaded.front().front().toString(), dest);
    QFile f(dest);
    QVERIFY(f.open(QIODevice::ReadOnly));
    QCOMPARE(f.readAll(), body_);
    QCOMPARE(cell(m, 0, Col::kState), QStringLiteral("downloaded"));
    QVERIFY(catalog_->openButton()->isEnabled());
    QVERIFY(!catalog_->downloadButton()->isEnabled());
    // The first tab scans again and lists it, as KVScope's own.
    QTRY_VERIFY_WITH_TIMEOUT(!scanned.isEmpty(), kWaitMs);
    QCOMPARE(page_->tableModel()->rowCount(), 1);
    QCOMPARE(page_->tableModel()->modelAt(0).source, std::string("KVScope"));
    QSignalSpy open(page_.get(), &ModelsPage::openRequested);
    catalog_->openButton()->click();
    QCOMPARE(open.count(), 1);
    QCOMPARE(open.front().front().toString(), dest);
    if (const QString dir = qEnvironmentVariable("KVSCOPE_TEST_SHOTS"); !dir.isEmpty()) {
      page_->grab().save(dir + QStringLiteral("/models-download-done.png"));
    }
  }

  void cancelLeavesNothing() {
    server_->setMode(Server::Mode::Slow);
    const CatalogTableModel& m = *catalog_->tableModel();
    catalog_->view()->setCurrentIndex(m.index(0, 0));
    catalog_->downloadButton()->click();
    ModelDownload* d = catalog_->activeDownload();
    QTRY_VERIFY_WITH_TIMEOUT(d->progress().received > 0, kWaitMs);
    QVERIFY(catalog_->progressBar()->isVisible() || !page_->isVisible());
    catalog_->cancelButton()->click();
    QCOMPARE(d->state(), ModelDownload::State::Cancelled);
    const QString dest = home_ + QStringLiteral("/.cache/kvscope/models/s.gguf");
    QVERIFY(!QFileInfo::exists(dest));
    QVERIFY(!QFileInfo::exists(dest + QStringLiteral(".part")));
    QVERIFY2(catalog_->statusLabel()->text().contains(QStringLiteral("cancelled")),
             qPrintable(catalog_->statusLabel()->text()));
    QVERIFY(catalog_->downloadButton()->isEnabled());
  }

  void failureIsShownInTheRowAndBelow() {
    server_->setMode(Server::Mode::NotFound);
    const CatalogTableModel& m = *catalog_->tableModel();
    catalog_->download(0);
    QTRY_VERIFY_WITH_TIMEOUT(!catalog_->activeDownload()->running(), kWaitMs);
    QVERIFY2(
        cell(m, 0, Col::kState).startsWith(QStringLiteral("failed: the server answered HTTP 404")),
        qPrintable(cell(m, 0, Col::kState)));
    QVERIFY(catalog_->statusLabel()->text().contains(QStringLiteral("HTTP 404")));
    if (const QString dir = qEnvironmentVariable("KVSCOPE_TEST_SHOTS"); !dir.isEmpty()) {
      page_->show();
      page_->grab().save(dir + QStringLiteral("/models-download-failed.png"));
    }
  }

  // The failed row's state reads in both themes: Qt::darkRed was 1.5:1 on the dark base.
  void aFailedRowReadsInBothThemes() {
    CatalogTableModel& m = *catalog_->tableModel();
    m.setRowState(0, QStringLiteral("failed: the server answered HTTP 404"), true);
    const QPalette saved = QGuiApplication::palette();
    for (const QPalette& theme : {dark_palette(), light_palette()}) {
      QGuiApplication::setPalette(theme);
      const auto colour = m.index(0, Col::kState).data(Qt::ForegroundRole).value<QColor>();
      QVERIFY(colour.isValid());
      for (const QPalette::ColorRole role : {QPalette::Base, QPalette::AlternateBase}) {
        const double ratio = contrast(colour, theme.color(role));
        QVERIFY2(ratio >= 4.5, qPrintable(QStringLiteral("%1 on %2: %3:1")
                                              .arg(colour.name(), theme.color(role).name())
                                              .arg(ratio, 0, 'f', 2)));
      }
    }
    QGuiApplication::setPalette(saved);
  }

 private:
  QByteArray body_;
  std::unique_ptr<Server> server_;
  std::unique_ptr<ModelsPage> page_;
  CatalogView* catalog_ = nullptr;
  QString home_;
};

}  // namespace kvscope::ui

QTEST_MAIN(kvscope::ui::ModelsCatalogTest)
#include "models_catalog_test.moc"
