// The sampling values a model publishes (a HF folder's generation_config.json) are a chat's
// defaults: a new chat starts from them, an empty chat takes the newly loaded model's, and
// the sampling dialog marks them and resets to them.
#include <QDialogButtonBox>
#include <QLabel>
#include <QPushButton>
#include <QSignalSpy>
#include <QtTest>

#include <filesystem>
#include <memory>

#include "chat/chat_controller.h"
#include "chat/session.h"
#include "support/tiny_hf_folder.h"
#include "ui_test_support.h"
#include "window/main_window.h"
#include "window/sampling_dialog.h"

namespace kvscope::ui {

class ModelSamplingTest : public QObject {
  Q_OBJECT

 private:
  static void maybe_save(QWidget& w, const char* name) {
    const QByteArray dir = qgetenv("KVSCOPE_UI_SHOTS");
    if (dir.isEmpty()) return;
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    w.grab().save(QString::fromLocal8Bit(dir) + QLatin1Char('/') + QLatin1String(name));
  }

  // Llama 3 Instruct's values, and a top_k of its own.
  static nlohmann::json llama3_like() {
    return {{"do_sample", true}, {"temperature", 0.6}, {"top_p", 0.9}, {"top_k", 11}};
  }

 private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QSettings().clear();
  }

  void newChatsStartFromTheModelsGenerationConfig() {
    const std::filesystem::path folder = test::scratch_dir().toStdString() + "/tiny-hf";
    kvscope::test::write_tiny_hf_folder(folder, llama3_like());
    AppConfig config;
    config.demo_folder = test::scratch_dir();
    MainWindow w(config);
    w.show();
    QVERIFY(test::load_model(w, QString::fromStdString(folder.string())));

    // The chat the window opened with, still empty, took the loaded model's values.
    const SamplingParams first = w.chats()->currentSession()->sampling().params;
    QCOMPARE(first.temperature, 0.6f);
    QCOMPARE(first.top_p, 0.9f);
    QCOMPARE(first.top_k, 11);
    QCOMPARE(first.min_p, SamplingParams{}.min_p);  // not in the file: KVScope's

    // A chat whose settings the user changed keeps them; the next new chat does not copy
    // them but starts from the model's again.
    SamplingSettings mine = w.chats()->currentSession()->sampling();
    mine.params.temperature = 1.3f;
    mine.params.top_k = 2;
    w.chats()->currentSession()->setSampling(mine);
    ChatSession* second = w.chats()->newChat();
    QCOMPARE(second->sampling().params.temperature, 0.6f);
    QCOMPARE(second->sampling().params.top_k, 11);
    QCOMPARE(second->sampling().max_tokens, SamplingSettings{}.max_tokens);
  }

  void samplingDialogMarksTheModelsValuesAndResetsToThem() {
    SamplingDefaults model;
    model.source = "/models/tiny/generation_config.json";
    model.do_sample = true;
    model.temperature = 0.6;
    model.top_k = 11;
    SamplingSettings s;
    s.params.temperature = 1.5f;
    s.params.top_k = 3;
    s.params.top_p = 0.5f;
    s.params.seed = 9;
    s.max_tokens = 100;
    SamplingDialog dialog(s, 2048, model);
    maybe_save(dialog, "sampling-dialog-model.png");

    auto* temperature = dialog.findChild<QLabel*>(QStringLiteral("model_temperature"));
    QVERIFY(temperature);
    QVERIFY2(temperature->text().contains(QStringLiteral("0.6")), qPrintable(temperature->text()));
    QVERIFY(dialog.findChild<QLabel*>(QStringLiteral("model_top_k")));
    QVERIFY(!dialog.findChild<QLabel*>(QStringLiteral("model_top_p")));  // not in the file
    auto* note = dialog.findChild<QLabel*>(QStringLiteral("modelDefaultsNote"));
    QVERIFY(note && note->text().contains(QStringLiteral("generation_config.json")));

    auto* reset = dialog.findChild<QDialogButtonBox*>()->button(QDialogButtonBox::RestoreDefaults);
    QCOMPARE(reset->text(), QStringLiteral("Model defaults"));
    reset->click();
    const SamplingSettings back = dialog.settings();
    QCOMPARE(back.params.temperature, 0.6f);
    QCOMPARE(back.params.top_k, 11);
    QCOMPARE(back.params.top_p, SamplingParams{}.top_p);
    QCOMPARE(back.params.seed, std::uint64_t{9});  // not a sampling default: kept
    QCOMPARE(back.max_tokens, 100);
  }

  void doSampleFalseShowsAndResetsToGreedy() {
    SamplingDefaults model;
    model.source = "/models/tiny/generation_config.json";
    model.do_sample = false;
    model.temperature = 0.7;
    SamplingDialog dialog(SamplingSettings{}, 2048, model);
    auto* temperature = dialog.findChild<QLabel*>(QStringLiteral("model_temperature"));
    QVERIFY(temperature && temperature->text().contains(QStringLiteral("greedy")));
    dialog.resetToModelDefaults();
    QCOMPARE(dialog.settings().params.temperature, 0.0f);
  }

  void withoutModelValuesTheDialogMarksNothing() {
    SamplingDialog dialog(SamplingSettings{}, 2048);
    QVERIFY(!dialog.findChild<QLabel*>(QStringLiteral("modelDefaultsNote")));
    QVERIFY(!dialog.findChild<QLabel*>(QStringLiteral("model_temperature")));
    auto* reset = dialog.findChild<QDialogButtonBox*>()->button(QDialogButtonBox::RestoreDefaults);
    QCOMPARE(reset->text(), QStringLiteral("Defaults"));
  }
};

}  // namespace kvscope::ui

QTEST_MAIN(kvscope::ui::ModelSamplingTest)
#include "model_sampling_test.moc"
