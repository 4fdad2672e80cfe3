// The load and sampling dialogs give back the settings they were opened with (so opening
// and accepting changes nothing), and turn them into the engine options they name.
// With KVSCOPE_UI_SHOTS=DIR set, PNGs of both dialogs are saved there to look at.
#include <QComboBox>
#include <QSettings>
#include <QTemporaryDir>
#include <QtTest>

#include "window/load_dialog.h"
#include "window/load_settings.h"
#include "window/sampling_dialog.h"

namespace kvscope::ui {

class DialogsTest : public QObject {
  Q_OBJECT

 private:
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
    QCOMPARE(s.k_dtype, d.k_dtype);
    QCOMPARE(s.v_dtype, QStringLiteral("int8"));  // good values are kept
    QCOMPARE(s.block_size, d.block_size);
    QCOMPARE(s.context_length, d.context_length);
    QCOMPARE(s.threads, d.threads);
    QCOMPARE(s.custom_memory_gib, d.custom_memory_gib);
    QCOMPARE(s.kv_pool_mib, 256);
    QCOMPARE(problems.size(), 6);
    QVERIFY(problems.join('\n').contains(QStringLiteral("load/custom_memory_gib")));

    LoadSettings custom = s;
    custom.memory = QStringLiteral("custom");
    QCOMPARE(engine_options(custom, {}, {}).memory_budget_bytes, std::uint64_t{16} << 30);
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
    LoadDialog dialog(QStringLiteral("/models/x.gguf"), s, {gpu}, false,
                      QStringLiteral("not in this build"));
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
