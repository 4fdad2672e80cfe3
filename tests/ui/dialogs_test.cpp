// The load and sampling dialogs give back the settings they were opened with (so opening
// and accepting changes nothing), and turn them into the engine options they name; the load
// dialog offers layers on the GPU only where a GPU can take them, and says why not elsewhere.
// With KVSCOPE_UI_SHOTS=DIR set, PNGs of the dialogs are saved there to look at.
#include <QComboBox>
#include <QLabel>
#include <QSettings>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QtTest>

#include "window/load_dialog.h"
#include "window/load_settings.h"
#include "window/sampling_dialog.h"

namespace kvscope::ui {

class DialogsTest : public QObject {
  Q_OBJECT

 private:
  // Stands in for the CUDA backend's factory: a build that has one.
  static BackendFactory some_factory() {
    return
        [](const Model&, const EngineOptions&, std::string*) { return std::unique_ptr<Backend>(); };
  }

  // The load dialog's "Layers on the GPU" row.
  struct GpuLayersRow {
    QComboBox* choice;
    QSpinBox* count;
    QLabel* note;
  };
  static GpuLayersRow gpu_layers_row(const LoadDialog& dialog) {
    GpuLayersRow row{dialog.findChild<QComboBox*>(QStringLiteral("gpuLayers")),
                     dialog.findChild<QSpinBox*>(QStringLiteral("gpuLayerCount")),
                     dialog.findChild<QLabel*>(QStringLiteral("gpuLayersNote"))};
    if (!row.choice || !row.count || !row.note) qFatal("the gpu-layers row's widgets are missing");
    return row;
  }

  static void maybe_save(QWidget& w, const char* name) {
    const QByteArray dir = qgetenv("KVSCOPE_UI_SHOTS");
    if (dir.isEmpty()) return;
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    w.grab().save(QString::fromLocal8Bit(dir) + QLatin1Char('/') + QLatin1String(name));
  }

 private slots:
  // A settings file edited by hand or by another version: every bad value falls back to its
  // default with a line naming it (a huge custom_memory_gib reached a double-to-integer cast).
  void settingsFromDiskAreCheckedValueByValue() {
    QTemporaryDir dir;
    const QString file = dir.filePath(QStringLiteral("kvscope.ini"));
    {
      QSettings w(file, QSettings::IniFormat);
      w.setValue("load/backend", "vulkan");
      w.setValue("load/gpu_layers", "lots");
      w.setValue("load/k_dtype", "int3");
      w.setValue("load/v_dtype", "int8");
      w.setValue("load/block_size", -16);
      w.setValue("load/context_length", "lots");
      w.setValue("load/threads", 99999);
      w.setValue("load/custom_memory_gib", 1e300);
      w.setValue("load/kv_pool_mib", 256);
    }
    QSettings r(file, QSettings::IniFormat);
    QStringList problems;
    const LoadSettings s = LoadSettings::read(r, &problems);
    const LoadSettings d;
    QCOMPARE(s.backend, d.backend);
    QCOMPARE(s.gpu_layers, d.gpu_layers);
    QCOMPARE(s.k_dtype, d.k_dtype);
    QCOMPARE(s.v_dtype, QStringLiteral("int8"));  // good values are kept
    QCOMPARE(s.block_size, d.block_size);
    QCOMPARE(s.context_length, d.context_length);
    QCOMPARE(s.threads, d.threads);
    QCOMPARE(s.custom_memory_gib, d.custom_memory_gib);
    QCOMPARE(s.kv_pool_mib, 256);
    QCOMPARE(problems.size(), 7);
    QVERIFY(problems.join('\n').contains(QStringLiteral("load/custom_memory_gib")));
    QVERIFY(problems.join('\n').contains(QStringLiteral("load/gpu_layers = \"lots\"")));

    LoadSettings custom = s;
    custom.memory = QStringLiteral("custom");
    QCOMPARE(engine_options(custom, {}, {}).memory_budget_bytes, std::uint64_t{16} << 30);
  }

  // gpu_layers is kept as "all", "auto" or a count the dialog offers (0 to kMaxGpuLayers);
  // anything else is the default (all) with a line naming it.
  void gpuLayersFromDiskAreAllAutoOrACount_data() {
    QTest::addColumn<QVariant>("stored");
    QTest::addColumn<qint64>("expected");  // the default where it is refused
    QTest::addColumn<bool>("refused");
    const qint64 all = EngineOptions::kAllGpuLayers;
    QTest::newRow("all") << QVariant("all") << all << false;
    QTest::newRow("auto") << QVariant("auto") << qint64{EngineOptions::kAutoGpuLayers} << false;
    QTest::newRow("0: the CPU alone") << QVariant("0") << qint64{0} << false;
    QTest::newRow("a count") << QVariant("24") << qint64{24} << false;
    QTest::newRow("an int, not text") << QVariant(24) << qint64{24} << false;
    QTest::newRow("the dialog's max") << QVariant("1000") << qint64{1000} << false;
    QTest::newRow("past the max") << QVariant("1001") << all << true;
    QTest::newRow("-1: all's value, not its name") << QVariant("-1") << all << true;
    QTest::newRow("-2: auto's value, not its name") << QVariant(-2) << all << true;
    QTest::newRow("a fraction") << QVariant("2.5") << all << true;
    QTest::newRow("empty") << QVariant("") << all << true;
    QTest::newRow("ALL") << QVariant("ALL") << all << true;
    QTest::newRow("a list") << QVariant(QStringList{"1", "2"}) << all << true;
  }
  void gpuLayersFromDiskAreAllAutoOrACount() {
    QFETCH(QVariant, stored);
    QFETCH(qint64, expected);
    QFETCH(bool, refused);
    QTemporaryDir dir;
    const QString file = dir.filePath(QStringLiteral("kvscope.ini"));
    QSettings(file, QSettings::IniFormat).setValue("load/gpu_layers", stored);
    QSettings r(file, QSettings::IniFormat);
    QStringList problems;
    QCOMPARE(qint64{LoadSettings::read(r, &problems).gpu_layers}, expected);
    QCOMPARE(problems.size(), refused ? 1 : 0);
    if (refused) QVERIFY2(problems[0].contains("load/gpu_layers"), qPrintable(problems[0]));
  }

  // Written as the file keeps it and read back unchanged: each of all, auto and a count.
  void gpuLayersRoundTripThroughTheSettingsFile() {
    const QList<std::pair<std::int64_t, QString>> cases = {{EngineOptions::kAllGpuLayers, "all"},
                                                           {EngineOptions::kAutoGpuLayers, "auto"},
                                                           {0, "0"},
                                                           {24, "24"}};
    for (const auto& [layers, text] : cases) {
      QTemporaryDir dir;
      const QString file = dir.filePath(QStringLiteral("kvscope.ini"));
      LoadSettings s;
      s.gpu_layers = layers;
      {
        QSettings w(file, QSettings::IniFormat);
        s.write(w);
      }
      QSettings r(file, QSettings::IniFormat);
      QCOMPARE(r.value("load/gpu_layers").toString(), text);
      QStringList problems;
      QCOMPARE(LoadSettings::read(r, &problems).gpu_layers, layers);
      QVERIFY(problems.isEmpty());
    }
  }

  // The count reaches the engine where a GPU can take layers; elsewhere the dialog greyed
  // the choice out, so the engine's default (and its own note on why the CPU runs) stays.
  void engineOptionsCarryGpuLayersWhereAGpuCanTakeThem() {
    LoadSettings s;
    s.gpu_layers = 24;
    QCOMPARE(engine_options(s, {}, some_factory()).gpu_layers, std::int64_t{24});
    s.backend = QStringLiteral("cuda");
    QCOMPARE(engine_options(s, {}, some_factory()).gpu_layers, std::int64_t{24});
    s.gpu_layers = EngineOptions::kAutoGpuLayers;
    QCOMPARE(engine_options(s, {}, some_factory()).gpu_layers, EngineOptions::kAutoGpuLayers);
    s.gpu_layers = 0;
    QCOMPARE(engine_options(s, {}, some_factory()).gpu_layers, std::int64_t{0});

    s.gpu_layers = 24;
    s.backend = QStringLiteral("cpu");
    QCOMPARE(engine_options(s, {}, some_factory()).gpu_layers, EngineOptions::kAllGpuLayers);
    s.backend = QStringLiteral("auto");
    QCOMPARE(engine_options(s, {}, {}).gpu_layers, EngineOptions::kAllGpuLayers);
  }

  void loadDialogReturnsTheSettingsItWasOpenedWith() {
    LoadSettings s;
    s.backend = QStringLiteral("cpu");
    s.k_dtype = QStringLiteral("int8");
    s.v_dtype = QStringLiteral("int4");
    s.block_size = 32;
    s.context_length = 4096;
    s.threads = 1;
    s.memory = QStringLiteral("rtx-4090");
    s.kv_pool_mib = 512;
    GpuPreset gpu;
    gpu.slug = "rtx-4090";
    gpu.name = "GeForce RTX 4090";
    gpu.memory_bytes = std::int64_t{24} << 30;
    LoadDialog dialog(QStringLiteral("/models/x.gguf"), s, {gpu},
                      {false, false, QStringLiteral("not in this build")});
    maybe_save(dialog, "load-dialog.png");
    const LoadSettings back = dialog.settings();
    QCOMPARE(dialog.path(), QStringLiteral("/models/x.gguf"));
    QCOMPARE(back.backend, s.backend);
    QCOMPARE(back.k_dtype, s.k_dtype);
    QCOMPARE(back.v_dtype, s.v_dtype);
    QCOMPARE(back.block_size, 32);
    QCOMPARE(back.context_length, 4096);
    QCOMPARE(back.memory, s.memory);
    QCOMPARE(back.kv_pool_mib, 512);

    const EngineOptions o = engine_options(back, {gpu}, {});
    QCOMPARE(o.k_dtype, KvDtype::Int8);
    QCOMPARE(o.v_dtype, KvDtype::Int4);
    QCOMPARE(o.memory_budget_bytes, std::uint64_t{24} << 30);
    QCOMPARE(o.kv_budget_bytes, std::uint64_t{512} << 20);
    QVERIFY(o.backend == BackendChoice::Cpu);
  }

  // Each of all, auto and a count comes back as it went in, with the count's box usable only
  // for "A number".
  void loadDialogReturnsTheGpuLayersItWasOpenedWith() {
    const CudaSupport cuda{true, true, QStringLiteral("NVIDIA GeForce RTX 4060")};
    for (const std::int64_t layers : {EngineOptions::kAllGpuLayers, EngineOptions::kAutoGpuLayers,
                                      std::int64_t{0}, std::int64_t{24}}) {
      LoadSettings s;
      s.gpu_layers = layers;
      LoadDialog dialog(QString(), s, {}, cuda);
      QCOMPARE(dialog.settings().gpu_layers, layers);
      QCOMPARE(gpu_layers_row(dialog).count->isEnabled(), layers >= 0);
    }
    LoadDialog dialog(QString(), LoadSettings{}, {}, cuda);
    const GpuLayersRow row = gpu_layers_row(dialog);
    row.choice->setCurrentIndex(2);  // A number
    QVERIFY(row.count->isEnabled());
    row.count->setValue(17);
    QCOMPARE(dialog.settings().gpu_layers, std::int64_t{17});
    row.choice->setCurrentIndex(1);  // The most that fit
    QVERIFY(!row.count->isEnabled());
    QCOMPARE(dialog.settings().gpu_layers, EngineOptions::kAutoGpuLayers);
  }

  // Layers on the GPU can be chosen only with a CUDA backend in the build and a backend that
  // can use it (auto or cuda); otherwise the row is greyed and a visible line says why.
  void loadDialogOffersGpuLayersOnlyWhereAGpuCanTakeThem_data() {
    QTest::addColumn<bool>("cuda_built");
    QTest::addColumn<QString>("backend");
    QTest::addColumn<QString>("reason");  // empty: offered
    QTest::newRow("no CUDA backend, auto")
        << false << QStringLiteral("auto") << QStringLiteral("This build has no CUDA backend");
    QTest::newRow("no CUDA backend, cpu")
        << false << QStringLiteral("cpu") << QStringLiteral("This build has no CUDA backend");
    QTest::newRow("CUDA backend, cpu")
        << true << QStringLiteral("cpu") << QStringLiteral("The CPU backend runs every layer");
    QTest::newRow("CUDA backend, auto") << true << QStringLiteral("auto") << QStringLiteral("");
    QTest::newRow("CUDA backend, cuda") << true << QStringLiteral("cuda") << QStringLiteral("");
  }
  void loadDialogOffersGpuLayersOnlyWhereAGpuCanTakeThem() {
    QFETCH(bool, cuda_built);
    QFETCH(QString, backend);
    QFETCH(QString, reason);
    LoadSettings s;
    s.backend = backend;
    s.gpu_layers = 24;
    LoadDialog dialog(QString(), s, {}, {cuda_built, cuda_built, QStringLiteral("a GPU")});
    dialog.show();
    const GpuLayersRow row = gpu_layers_row(dialog);
    QCOMPARE(row.choice->isEnabled(), reason.isEmpty());
    QCOMPARE(row.count->isEnabled(), reason.isEmpty());
    QCOMPARE(row.note->text(), reason);
    QVERIFY(row.note->isVisible());
    if (!reason.isEmpty()) QCOMPARE(row.choice->toolTip(), reason);
    QCOMPARE(dialog.settings().gpu_layers,
             std::int64_t{24});  // kept, greyed, for when it applies again
  }

  // Switching the backend to the CPU and back greys the row out and restores it.
  void loadDialogFollowsTheBackendChoice() {
    LoadSettings s;
    s.gpu_layers = 24;
    LoadDialog dialog(QString(), s, {}, {true, true, QStringLiteral("NVIDIA GeForce RTX 4060")});
    const GpuLayersRow row = gpu_layers_row(dialog);
    auto* backend = dialog.findChild<QComboBox*>(QStringLiteral("backend"));
    QVERIFY(backend);
    maybe_save(dialog, "load-dialog-gpu-layers.png");
    QVERIFY(row.choice->isEnabled());
    backend->setCurrentIndex(backend->findData(QStringLiteral("cpu")));
    QVERIFY(!row.choice->isEnabled());
    QCOMPARE(row.note->text(), QStringLiteral("The CPU backend runs every layer"));
    maybe_save(dialog, "load-dialog-cpu-backend.png");
    backend->setCurrentIndex(backend->findData(QStringLiteral("auto")));
    QVERIFY(row.choice->isEnabled());
    QVERIFY(row.count->isEnabled());
    QVERIFY(row.note->text().isEmpty());
  }

  void samplingDialogReturnsTheSettingsItWasOpenedWith() {
    SamplingSettings s;
    s.params.temperature = 0.25f;
    s.params.top_k = 7;
    s.params.top_p = 0.5f;
    s.params.min_p = 0.1f;
    s.params.repeat_penalty = 1.2f;
    s.params.repeat_last_n = -1;
    s.params.seed = 42;
    s.max_tokens = 300;
    SamplingDialog dialog(s, 2048);
    maybe_save(dialog, "sampling-dialog.png");
    const SamplingSettings back = dialog.settings();
    QCOMPARE(back.params.temperature, 0.25f);
    QCOMPARE(back.params.top_k, 7);
    QCOMPARE(back.params.top_p, 0.5f);
    QCOMPARE(back.params.min_p, 0.1f);
    QCOMPARE(back.params.repeat_penalty, 1.2f);
    QCOMPARE(back.params.repeat_last_n, -1);
    QCOMPARE(back.params.seed, std::uint64_t{42});
    QCOMPARE(back.max_tokens, 300);
  }
};

}  // namespace kvscope::ui

QTEST_MAIN(kvscope::ui::DialogsTest)
#include "dialogs_test.moc"
