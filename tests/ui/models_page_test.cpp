// The "Models" page on a fake home: stories260K kept as LM Studio and llama.cpp keep GGUF
// files and a truncated copy in KVScope's cache. The page lists them with the fields their
// headers give (checked against the mapped file), shows the broken one's error greyed with
// the full text as tooltip, answers with answer_local_fit for the chosen GPU and context
// without scanning again, asks to open the row a double-click names, queues a scan asked for
// while one runs, keeps added folders in the settings (and forgets them), and says where it
// looked when it finds nothing. The main window opens what the page asks for.
#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QGuiApplication>
#include <QLabel>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTableView>
#include <QToolButton>
#include <QtTest>

#include <memory>
#include <numeric>

#include "chat/chat_controller.h"
#include "model/gguf/gguf_file.h"
#include "models/local_models_model.h"
#include "models/models_page.h"
#include "plan/local_model_fit.h"
#include "plan/units.h"
#include "ui_test_support.h"
#include "window/main_window.h"

namespace kvscope::ui {
namespace {

using Col = LocalModelsModel::Column;
constexpr std::int64_t kMiB = 1024 * 1024;

GpuPreset gpu(const char* slug, const char* name, std::int64_t memory_bytes) {
  GpuPreset g;
  g.slug = slug;
  g.name = name;
  g.memory_bytes = memory_bytes;
  return g;
}

// A GPU too small for even the CUDA context, and one with room to spare.
QVector<GpuPreset> test_gpus() {
  return {gpu("tiny", "Tiny GPU", 64 * kMiB), gpu("big", "Big GPU", 24 * 1024 * kMiB)};
}

// Files in a fake home, named by what the page should call them.
struct FakeHome {
  QString home;
  QString lm_studio;  // stories260K.gguf, as LM Studio keeps it
  QString llama_cpp;  // tiny.gguf, in llama.cpp's cache
  QString broken;     // broken.gguf, half of the model, in KVScope's cache
};

bool copy_to(const QString& from, const QString& to, qint64 bytes = -1) {
  QDir().mkpath(QFileInfo(to).path());
  QFile in(from), out(to);
  if (!in.open(QIODevice::ReadOnly) || !out.open(QIODevice::WriteOnly)) return false;
  return out.write(in.read(bytes < 0 ? in.size() : bytes)) >= 0;
}

FakeHome make_home(const QString& model) {
  FakeHome h;
  h.home = test::scratch_dir();
  h.lm_studio = h.home + "/.lmstudio/models/karpathy/tinyllamas/stories260K.gguf";
  h.llama_cpp = h.home + "/.cache/llama.cpp/tiny.gguf";
  h.broken = h.home + "/.cache/kvscope/models/broken.gguf";
  const bool ok = copy_to(model, h.lm_studio) && copy_to(model, h.llama_cpp) &&
                  copy_to(model, h.broken, QFileInfo(model).size() / 2);
  if (!ok) qFatal("cannot write the fake home under %s", qPrintable(h.home));
  return h;
}

ModelsPageConfig config_for(const QString& home) {
  // No variable is set: every place is under the fake home.
  return {home, [](std::string_view) { return std::optional<std::string>(); }, test_gpus(), {}, {}};
}

QString cell(const ModelsPage& page, int row, int column) {
  return page.tableModel()->index(row, column).data().toString();
}

int row_named(const ModelsPage& page, const QString& name) {
  for (int row = 0; row < page.tableModel()->rowCount(); ++row) {
    if (cell(page, row, Col::kName) == name) return row;
  }
  return -1;
}

bool scan_and_wait(ModelsPage& page) {
  QSignalSpy done(&page, &ModelsPage::scanFinished);
  page.rescan();
  return done.wait(60000);
}

// The planner column's text for `a`, as the page must write it.
QString expected_answer(const LocalFitAnswer& a) {
  const auto digits = [](std::int64_t n) { return QString::fromStdString(group_digits(n)); };
  const QString dtype = QString::fromUtf8(kv_dtype_name(a.kv_dtype).data());
  if (a.fits) {
    return QStringLiteral("fits %1 tokens, KV %2 (up to %3)")
        .arg(digits(a.context), dtype, digits(a.max_context.tokens));
  }
  if (a.gpu_layers > 0) {
    return QStringLiteral(
               "fits with %1 of %2 layers on the GPU at %3 tokens, KV %4 (short by %5 "
               "whole)")
        .arg(a.gpu_layers)
        .arg(a.n_layers)
        .arg(digits(a.context), dtype, QString::fromStdString(human_bytes(a.short_by_bytes)));
  }
  return QStringLiteral("short by %1 at %2 tokens, KV %3")
      .arg(QString::fromStdString(human_bytes(a.short_by_bytes)), digits(a.context), dtype);
}

}  // namespace

class ModelsPageTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { QStandardPaths::setTestModeEnabled(true); }
  void init() { QSettings().clear(); }

  void rescanReturnsAtOnceAndSaysItIsScanning() {
    KVSCOPE_QT_REQUIRE_SHARED(model, "models/stories260K.gguf");
    const FakeHome h = make_home(model);
    ModelsPage page(config_for(h.home));
    QSignalSpy done(&page, &ModelsPage::scanFinished);
    page.rescan();
    // The scan runs on its own thread: nothing is listed yet when rescan() returns.
    QVERIFY(page.scanning());
    QCOMPARE(page.statusLabel()->text(), QStringLiteral("Scanning\u2026"));
    QCOMPARE(page.tableModel()->rowCount(), 0);
    QVERIFY(done.wait(60000));
    QVERIFY(!page.scanning());
    QCOMPARE(page.tableModel()->rowCount(), 3);
    QVERIFY(!page.view()->isHidden());
    QVERIFY2(page.statusLabel()->text().startsWith(QStringLiteral("3 models found, 1 of them")),
             qPrintable(page.statusLabel()->text()));
  }

  void listsEachModelWithTheFieldsOfItsFile() {
    KVSCOPE_QT_REQUIRE_SHARED(model, "models/stories260K.gguf");
    const FakeHome h = make_home(model);
    ModelsPage page(config_for(h.home));
    QVERIFY(scan_and_wait(page));
    QCOMPARE(page.tableModel()->rowCount(), 3);

    const GgufFile mapped(model.toStdString());  // the whole file, mapped: the reference
    const std::int64_t params =
        std::accumulate(mapped.tensors().begin(), mapped.tensors().end(), std::int64_t{0},
                        [](std::int64_t n, const GgufTensor& t) { return n + t.n_elements(); });
    const auto context = static_cast<std::int64_t>(*mapped.find_uint("llama.context_length"));
    const QString size = QString::fromStdString(human_bytes(QFileInfo(model).size()));
    const struct {
      QString name, source, path;
    } expected[] = {{"stories260K.gguf", "LM Studio", h.lm_studio},
                    {"tiny.gguf", "llama.cpp", h.llama_cpp}};
    for (const auto& e : expected) {
      const int row = row_named(page, e.name);
      QVERIFY2(row >= 0, qPrintable(e.name));
      QCOMPARE(cell(page, row, Col::kSource), e.source);
      QCOMPARE(cell(page, row, Col::kArchitecture), QStringLiteral("llama"));
      QCOMPARE(cell(page, row, Col::kParameters), LocalModelsModel::parameterCount(params));
      QCOMPARE(cell(page, row, Col::kWeights), QStringLiteral("F32"));
      QCOMPARE(cell(page, row, Col::kSize), size);
      QCOMPARE(cell(page, row, Col::kContext), QString::fromStdString(group_digits(context)));
      QCOMPARE(page.tableModel()->index(row, Col::kName).data(LocalModelsModel::kPathRole),
               QVariant(e.path));
      QVERIFY(page.tableModel()
                  ->index(row, Col::kName)
                  .data(Qt::ToolTipRole)
                  .toString()
                  .startsWith(e.path));
    }
    QCOMPARE(LocalModelsModel::parameterCount(292'032), QStringLiteral("292K"));
    QCOMPARE(LocalModelsModel::parameterCount(134'515'008), QStringLiteral("135M"));
    QCOMPARE(LocalModelsModel::parameterCount(6'738'415'616), QStringLiteral("6.74B"));
  }

  // A count just under a unit that rounds up to it is written in that unit (Gemma 3 1B was
  // "1000M" in the Download tab).
  void aParameterCountThatRoundsUpToTheNextUnitIsWrittenInIt() {
    QCOMPARE(LocalModelsModel::parameterCount(999'885'952), QStringLiteral("1.00B"));
    QCOMPARE(LocalModelsModel::parameterCount(999'499'999), QStringLiteral("999M"));
    QCOMPARE(LocalModelsModel::parameterCount(999'700), QStringLiteral("1M"));
    QCOMPARE(LocalModelsModel::parameterCount(999'499), QStringLiteral("999K"));
  }

  void aBrokenFileShowsItsErrorGreyedWithTheWholeErrorAsTooltip() {
    KVSCOPE_QT_REQUIRE_SHARED(model, "models/stories260K.gguf");
    const FakeHome h = make_home(model);
    ModelsPage page(config_for(h.home));
    QVERIFY(scan_and_wait(page));
    const int row = row_named(page, QStringLiteral("broken.gguf"));
    QVERIFY(row >= 0);
    const LocalModel& m = page.tableModel()->modelAt(row);
    QVERIFY(!m.ok());
    const QString error = QString::fromStdString(m.error);
    QVERIFY2(error.contains(QStringLiteral("past end of file")) || error.contains("truncated"),
             qPrintable(error));
    QCOMPARE(cell(page, row, Col::kSource), QStringLiteral("KVScope"));
    QCOMPARE(cell(page, row, Col::kArchitecture), QStringLiteral("error: ") + error);
    for (int c : {Col::kParameters, Col::kSize, Col::kPlan}) QVERIFY(cell(page, row, c).isEmpty());
    const QString tip = page.tableModel()->index(row, Col::kName).data(Qt::ToolTipRole).toString();
    QVERIFY2(tip.startsWith(h.broken) && tip.endsWith(error), qPrintable(tip));
    const QColor grey = QGuiApplication::palette().color(QPalette::Disabled, QPalette::Text);
    QCOMPARE(page.tableModel()->index(row, Col::kName).data(Qt::ForegroundRole).value<QColor>(),
             grey);
    QVERIFY(!page.tableModel()->index(0, Col::kName).data(Qt::ForegroundRole).isValid());
    // The error has the row's width from Architecture on.
    QCOMPARE(page.view()->columnSpan(row, Col::kArchitecture),
             Col::kColumnCount - Col::kArchitecture);
  }

  void theGpuAndContextChangeThePlannerColumnWithoutScanningAgain() {
    KVSCOPE_QT_REQUIRE_SHARED(model, "models/stories260K.gguf");
    const FakeHome h = make_home(model);
    ModelsPage page(config_for(h.home));
    QSignalSpy scans(&page, &ModelsPage::scanFinished);
    QVERIFY(scan_and_wait(page));
    const int row = row_named(page, QStringLiteral("tiny.gguf"));
    const LocalModel m = page.tableModel()->modelAt(row);
    const auto answer_for = [&](std::int64_t memory, std::int64_t context) {
      LocalFitQuestion q;
      q.memory_bytes = memory;
      q.context = context;
      return answer_local_fit(m, q);
    };

    const struct {
      int gpu;
      int context;
    } steps[] = {{0, 0}, {1, 0}, {1, 64}, {0, 64}, {1, 1 << 20}};
    bool saw_fit = false, saw_short = false;
    for (const auto& s : steps) {
      page.gpuBox()->setCurrentIndex(s.gpu);
      page.contextBox()->setValue(s.context);
      const LocalFitAnswer a = answer_for(test_gpus()[s.gpu].memory_bytes, s.context);
      QVERIFY2(a.ok(), a.error.c_str());
      saw_fit |= a.fits;
      saw_short |= !a.fits;
      QCOMPARE(cell(page, row, Col::kPlan), expected_answer(a));
    }
    QVERIFY(saw_fit && saw_short);  // the sweep crosses both answers
    QCOMPARE(scans.count(), 1);
    QVERIFY(!page.scanning());
    // A broken row has no answer to show.
    QVERIFY(cell(page, row_named(page, QStringLiteral("broken.gguf")), Col::kPlan).isEmpty());
  }

  void doubleClickOrOpenAsksToOpenThatRowsFile() {
    KVSCOPE_QT_REQUIRE_SHARED(model, "models/stories260K.gguf");
    const FakeHome h = make_home(model);
    ModelsPage page(config_for(h.home));
    QSignalSpy done(&page, &ModelsPage::scanFinished);
    page.resize(1000, 500);
    page.show();                                   // the first show scans
    QVERIFY(QTest::qWaitForWindowExposed(&page));  // the scan may end while this waits
    QTRY_COMPARE_WITH_TIMEOUT(done.count(), 1, 60000);
    QSignalSpy open(&page, &ModelsPage::openRequested);

    QTableView* view = page.view();
    const auto double_click = [&](int row) {
      const QRect r = view->visualRect(page.tableModel()->index(row, Col::kSource));
      QTest::mouseClick(view->viewport(), Qt::LeftButton, {}, r.center());
      QTest::mouseDClick(view->viewport(), Qt::LeftButton, {}, r.center());
    };
    double_click(row_named(page, QStringLiteral("tiny.gguf")));
    QCOMPARE(open.count(), 1);
    QCOMPARE(open.takeFirst().at(0).toString(), h.llama_cpp);

    double_click(row_named(page, QStringLiteral("broken.gguf")));  // nothing to open
    QCOMPARE(open.count(), 0);
    QVERIFY(!page.openButton()->isEnabled());

    view->selectRow(row_named(page, QStringLiteral("stories260K.gguf")));
    QVERIFY(page.openButton()->isEnabled());
    QTest::mouseClick(page.openButton(), Qt::LeftButton);
    QCOMPARE(open.count(), 1);
    QCOMPARE(open.takeFirst().at(0).toString(), h.lm_studio);
  }

  void aScanAskedForWhileOneRunsRunsNextAndOnlyItsResultIsShown() {
    KVSCOPE_QT_REQUIRE_SHARED(model, "models/stories260K.gguf");
    const FakeHome h = make_home(model);
    const QString extra = test::scratch_dir();
    QVERIFY(copy_to(model, extra + "/mine.gguf"));
    ModelsPage page(config_for(h.home));
    QSignalSpy done(&page, &ModelsPage::scanFinished);
    page.rescan();
    QVERIFY(page.addFolder(extra));  // scans again while the first scan runs
    QVERIFY(done.wait(60000));
    QTest::qWait(200);  // a second finish would come now
    QCOMPARE(done.count(), 1);
    QCOMPARE(page.tableModel()->rowCount(), 4);
    const int row = row_named(page, QStringLiteral("mine.gguf"));
    QVERIFY(row >= 0);
    QCOMPARE(cell(page, row, Col::kSource), QStringLiteral("added folder"));

    // Forgotten, its model is gone from the next scan.
    QVERIFY(page.removeFolder(extra));
    QVERIFY(done.wait(60000));
    QCOMPARE(page.tableModel()->rowCount(), 3);
    QCOMPARE(row_named(page, QStringLiteral("mine.gguf")), -1);
  }

  void addedFoldersAreKeptInTheSettings() {
    const QString home = test::scratch_dir();
    const QString a = test::scratch_dir(), b = test::scratch_dir();
    {
      ModelsPage page(config_for(home));
      QVERIFY(page.addFolder(a));
      QVERIFY(page.addFolder(b + "/./"));
      QVERIFY(!page.addFolder(a));                      // already there
      QVERIFY(!page.addFolder(a + "/no-such-folder"));  // not a folder
      QCOMPARE(page.addedFolders(), (QStringList{a, b}));
    }
    ModelsPage again(config_for(home));
    QCOMPARE(again.addedFolders(), (QStringList{a, b}));
    QVERIFY(!again.addedFoldersButton()->isHidden());
    QVERIFY(again.removeFolder(a));
    QVERIFY(!again.removeFolder(a));
    QCOMPARE(ModelsPage(config_for(home)).addedFolders(), QStringList{b});
    QVERIFY(again.removeFolder(b));
    QVERIFY(again.addedFoldersButton()->isHidden());
    QCOMPARE(ModelsPage(config_for(home)).addedFolders(), QStringList{});

    // A hand-edited settings file: only absolute paths are taken.
    QSettings().setValue("models/addedFolders", QStringList{"relative/dir", a, a});
    QCOMPARE(ModelsPage(config_for(home)).addedFolders(), QStringList{a});
    QSettings().setValue("models/addedFolders", 42);
    QCOMPARE(ModelsPage(config_for(home)).addedFolders(), QStringList{});
  }

  void findingNothingSaysWhereItLooked() {
    const QString home = test::scratch_dir();
    const QString added = test::scratch_dir();
    ModelsPage page(config_for(home));
    QVERIFY(page.addFolder(added));
    QSignalSpy done(&page, &ModelsPage::scanFinished);
    QVERIFY(done.wait(60000));
    QCOMPARE(page.tableModel()->rowCount(), 0);
    QVERIFY(page.view()->isHidden());  // the message takes the table's place
    const QString text = page.statusLabel()->text();
    QVERIFY2(text.startsWith(QStringLiteral("No models found. Looked in:")), qPrintable(text));
    for (const QString& place :
         {home + "/.cache/huggingface/hub (Hugging Face)", home + "/.ollama/models (Ollama)",
          home + "/.lmstudio/models (LM Studio)", home + "/.cache/kvscope/models (KVScope)",
          added + " (added folder)"}) {
      QVERIFY2(text.contains(place), qPrintable(place));
    }
  }

  void theWindowOpensTheModelThePageNames() {
    KVSCOPE_QT_REQUIRE_SHARED(model, "models/stories260K.gguf");
    AppConfig config;
    config.demo_folder = test::scratch_dir();
    MainWindow w(config);
    QTabWidget* pages = w.pages();
    QCOMPARE(pages->tabText(pages->indexOf(w.modelsPage())), QStringLiteral("Models"));
    pages->setCurrentWidget(w.modelsPage());
    QSignalSpy ready(&w, &MainWindow::modelReady);
    emit w.modelsPage()->openRequested(model);
    QVERIFY(ready.wait(60000));
    QCOMPARE(w.chats()->model()->path, model);
    QCOMPARE(pages->currentIndex(), 0);  // back on the chat, which shows the model
  }
};

}  // namespace kvscope::ui

QTEST_MAIN(kvscope::ui::ModelsPageTest)
#include "models_page_test.moc"
