// The interface in Simplified Chinese: run with LANG=zh_CN.UTF-8 (tests/ui/CMakeLists.txt),
// KVScope follows the system locale and finds its embedded zh_CN translation; every text a
// user can see in the main window, on every page (chat, models, what fits, remote, demos),
// in its menus and tooltips is then Chinese. What may stay in Latin letters is named one by
// one below: model and GPU names from the shipped catalogues, units, file formats, dtype
// names, and abbreviations such as KV, GQA, CPU.
#include <QAbstractButton>
#include <QAbstractItemView>
#include <QAbstractSpinBox>
#include <QAction>
#include <QChart>
#include <QChartView>
#include <QComboBox>
#include <QFileInfo>
#include <QGroupBox>
#include <QHeaderView>
#include <QLabel>
#include <QLegendMarker>
#include <QLibraryInfo>
#include <QLineEdit>
#include <QMenu>
#include <QMenuBar>
#include <QPlainTextEdit>
#include <QRegularExpression>
#include <QSet>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTabWidget>
#include <QTextDocumentFragment>
#include <QTextEdit>
#include <QtTest>

#include <memory>

#include "chat/session.h"
#include "fits/catalogue.h"
#include "models/catalog_table_model.h"
#include "serving/serve_dialog.h"
#include "ui_test_support.h"
#include "window/language.h"
#include "window/load_dialog.h"
#include "window/load_settings.h"
#include "window/main_window.h"
#include "window/sampling_dialog.h"

namespace kvscope::ui {

namespace {

// Words that stay in Latin letters in the Chinese interface. Each is a regular expression
// matched as a whole word (case-sensitive) and removed before the rest of the text is
// checked for Latin letters.
// clang-format off
const QStringList kAllowedWords = {
    // the product, other software, file formats and protocols
    "KVScope", "kvscope-cli serve", "KvCacheManager", "vLLM", "llama\\.cpp", "llama-server",
    "llama", "Hugging Face", "OpenAI", "Ollama", "LM Studio", "GPT4All", "Jan", "ShareGPT",
    "GGUF", "safetensors", "JSON", "PNG", "SVG", "CSV", "Markdown", "HTTP", "http", "https",
    "API", "URL", "SQLite", "QSQLITE", "English",
    // keys as the keyboard names them
    "Enter", "Shift", "Esc",
    // hardware
    "CPU", "GPU", "CUDA",
    // attention and the cache; symbols of the demos' text (N samples); error measure;
    // latency percentiles; tensor and pipeline parallelism
    "KV", "K", "V", "GQA", "MQA", "MHA", "head_dim", "N", "RMS", "p50", "p90", "p99", "TP", "PP",
    // sampling parameters as model files name them
    "Top-k", "Top-p", "Min-p", "top-k", "top-p", "min-p", "do_sample",
    "generation_config\\.json", "config\\.json",
    // element formats and weight types; vLLM's --kv-cache-dtype values
    "f16", "bf16", "f32", "int8", "int4", "q8_0", "q4_0", "q4_1", "q4_k_m", "q5_k_m", "q6_k",
    "auto", "fp8",
    // quantized checkpoint formats vLLM loads (AWQ, GPTQ, bitsandbytes); vLLM's engines, its
    // command and its option names; KVScope's programs and llama.cpp's -ngl
    "awq", "gptq", "bnb", "V0", "V1", "vllm serve", "max_model_len", "kvscope-cli bench",
    "kvscope-cli",
    "kvscope", "-ngl",
    // a factor ("4.17x")
    "[0-9.]+x",
    // units
    "B", "KiB", "MiB", "GiB", "GB/s", "ms",
    // command-line options and paths inside a sentence ("--metrics", "/v1/models")
    "--[a-z][a-z-]*", "/[\\w./-]+", "[\\w.-]+\\.gguf",
};
// clang-format on

// A whole string that is a model or file name: "stories260K.gguf", a path, a URL.
const QRegularExpression kNameLike(
    QStringLiteral(R"(^(\S+\.(gguf|json|sqlite|png|svg|csv|md)|/\S*|https?://\S+)$)"));

QString plain(const QString& text) {
  QString t =
      Qt::mightBeRichText(text) ? QTextDocumentFragment::fromHtml(text).toPlainText() : text;
  // Mnemonics: "文件(&F)" shows as 文件 with F underlined; "&File" as File.
  t.remove(QRegularExpression(QStringLiteral(R"(\(&\w\))")));
  t.remove(QLatin1Char('&'));
  return t.trimmed();
}

class Collector {
 public:
  explicit Collector(QStringList names) {
    QStringList alternatives;
    // Longest first, so "Hugging Face" goes before "Face" would (and "Q4_K_M" before "Q4_K").
    std::sort(names.begin(), names.end(),
              [](const QString& a, const QString& b) { return a.size() > b.size(); });
    for (const QString& n : names) alternatives << QRegularExpression::escape(n);
    alternatives << kAllowedWords;
    allowed_ = QRegularExpression(QStringLiteral(R"((?<![\w.-])(%1)(?![\w-]|\.\w))")
                                      .arg(alternatives.join(QLatin1Char('|'))));
  }

  void add(const QString& where, const QString& raw) {
    const QString text = plain(raw);
    if (text.isEmpty() || kNameLike.match(text).hasMatch()) return;
    QString rest = text;
    rest.replace(allowed_, QStringLiteral(" "));
    if (!rest.contains(QRegularExpression(QStringLiteral("[A-Za-z]")))) return;
    const QString line = where + QStringLiteral(": \"") + text + QLatin1Char('"');
    if (!seen_.contains(line)) {
      seen_.insert(line);
      untranslated_ << line;
    }
  }

  void actions(const QString& where, const QList<QAction*>& list) {
    for (QAction* a : list) {
      if (a->isSeparator()) continue;
      add(where + QStringLiteral(" action"), a->text());
      add(where + QStringLiteral(" action tooltip"),
          a->toolTip() == a->text().remove('&') ? QString() : a->toolTip());
      if (QMenu* m = a->menu())
        actions(where + QStringLiteral(" > ") + plain(m->title()), m->actions());
    }
  }

  void widget(QWidget* w) {
    const QString where =
        QString::fromLatin1(w->metaObject()->className()) +
        (w->objectName().isEmpty() ? QString() : QLatin1Char('#') + w->objectName());
    add(where + QStringLiteral(" tooltip"), w->toolTip());
    if (w->isWindow()) add(where + QStringLiteral(" title"), w->windowTitle());
    if (auto* l = qobject_cast<QLabel*>(w)) add(where, l->text());
    if (auto* b = qobject_cast<QAbstractButton*>(w)) add(where, b->text());
    if (auto* g = qobject_cast<QGroupBox*>(w)) add(where, g->title());
    if (auto* e = qobject_cast<QLineEdit*>(w))
      add(where + QStringLiteral(" placeholder"), e->placeholderText());
    if (auto* e = qobject_cast<QPlainTextEdit*>(w))
      add(where + QStringLiteral(" placeholder"), e->placeholderText());
    if (auto* e = qobject_cast<QTextEdit*>(w))
      add(where + QStringLiteral(" placeholder"), e->placeholderText());
    if (auto* s = qobject_cast<QSpinBox*>(w)) {
      add(where + QStringLiteral(" prefix"), s->prefix());
      add(where + QStringLiteral(" suffix"), s->suffix());
    }
    if (auto* s = qobject_cast<QDoubleSpinBox*>(w)) {
      add(where + QStringLiteral(" prefix"), s->prefix());
      add(where + QStringLiteral(" suffix"), s->suffix());
    }
    if (auto* s = qobject_cast<QAbstractSpinBox*>(w))
      add(where + QStringLiteral(" special"), s->specialValueText());
    if (auto* t = qobject_cast<QTabWidget*>(w)) {
      for (int i = 0; i < t->count(); ++i) {
        add(where + QStringLiteral(" tab"), t->tabText(i));
        add(where + QStringLiteral(" tab tooltip"), t->tabToolTip(i));
      }
    }
    if (auto* c = qobject_cast<QComboBox*>(w)) {
      for (int i = 0; i < c->count(); ++i) {
        add(where + QStringLiteral(" item"), c->itemText(i));
        add(where + QStringLiteral(" item tooltip"), c->itemData(i, Qt::ToolTipRole).toString());
      }
    }
    if (auto* v = qobject_cast<QAbstractItemView*>(w); v && v->model()) {
      QAbstractItemModel* m = v->model();
      for (int c = 0; c < m->columnCount(); ++c) {
        add(where + QStringLiteral(" column"), m->headerData(c, Qt::Horizontal).toString());
        add(where + QStringLiteral(" column tooltip"),
            m->headerData(c, Qt::Horizontal, Qt::ToolTipRole).toString());
      }
      if (qobject_cast<QHeaderView*>(w) == nullptr) {
        for (int r = 0; r < std::min(m->rowCount(), 64); ++r) {
          add(where + QStringLiteral(" row"), m->headerData(r, Qt::Vertical).toString());
          add(where + QStringLiteral(" row tooltip"),
              m->headerData(r, Qt::Vertical, Qt::ToolTipRole).toString());
        }
      }
    }
    if (auto* cv = qobject_cast<QChartView*>(w); cv && cv->chart()) chart(where, cv->chart());
    if (auto* menu_bar = qobject_cast<QMenuBar*>(w))
      actions(QStringLiteral("menu"), menu_bar->actions());
    else if (!qobject_cast<QMenu*>(w))
      actions(where, w->actions());
  }

  void chart(const QString& where, QChart* c) {
    add(where + QStringLiteral(" chart title"), c->title());
    for (QAbstractAxis* axis : c->axes()) add(where + QStringLiteral(" axis"), axis->titleText());
    for (QLegendMarker* m : c->legend()->markers()) {
      if (m->isVisible()) add(where + QStringLiteral(" legend"), m->label());
    }
  }

  QStringList untranslated() const { return untranslated_; }

 private:
  QRegularExpression allowed_;
  QSet<QString> seen_;
  QStringList untranslated_;
};

// The names the catalogues ship (GPU and model presets, downloadable models): data, kept as
// their makers spell them.
QStringList catalogue_names() {
  QStringList names;
  const FitsCatalogue fits = load_fits_catalogue();
  for (const ModelPreset& m : fits.models) names << QString::fromStdString(m.name);
  for (const GpuPreset& g : fits.gpus) names << QString::fromStdString(g.name);
  for (const CatalogModel& m : load_shipped_catalog(nullptr)) {
    names << QString::fromStdString(m.name) << QString::fromStdString(m.display_name);
  }
  return names;
}

}  // namespace

class TranslationTest : public QObject {
  Q_OBJECT

 private:
  std::unique_ptr<MainWindow> window_;

  QStringList untranslated_in_window() {
    Collector collect(catalogue_names() << QStringLiteral("stories260K"));
    collect.widget(window_.get());
    for (QWidget* w : window_->findChildren<QWidget*>()) collect.widget(w);
    return collect.untranslated();
  }

 private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QSettings().clear();
    QVERIFY2(QLocale::system().name() == QLatin1String("zh_CN"),
             qPrintable(QStringLiteral("the test runs with LANG=zh_CN.UTF-8; the system locale "
                                       "is %1")
                            .arg(QLocale::system().name())));
  }

  void followsTheSystemLocaleByDefault() {
    QVERIFY(saved_language().isEmpty());
    QVERIFY2(install_translators(saved_language()), "no embedded zh_CN translation found");
    QCOMPARE(MainWindow::tr("&File"), QStringLiteral("\u6587\u4ef6(&F)"));
    // Qt's own dialog buttons, where Qt's translations are installed (qt6-translations-l10n).
    if (QFileInfo::exists(QLibraryInfo::path(QLibraryInfo::TranslationsPath) +
                          QStringLiteral("/qtbase_zh_CN.qm"))) {
      QVERIFY(QCoreApplication::translate("QPlatformTheme", "Cancel") != QLatin1String("Cancel"));
    }
  }

  void englishChosenInTheMenuOverridesTheSystemLocale() {
    save_language(QStringLiteral("en"));
    QVERIFY(!install_translators(saved_language()));
    QCOMPARE(MainWindow::tr("&File"), QStringLiteral("&File"));
    save_language(QString());
    QVERIFY(install_translators(saved_language()));
  }

  void theLanguageMenuSavesTheChoiceAndOffersARestart() {
    AppConfig config;
    config.demo_folder = test::scratch_dir();
    MainWindow w(config);
    LanguageMenu* menu = w.languageMenu();
    QVERIFY(menu);
    int asked = 0;
    menu->setRestartConfirmation([&asked] {
      ++asked;
      return false;  // "later": the window stays
    });
    auto* english = menu->findChild<QAction*>(QStringLiteral("language_en"));
    QVERIFY(english);
    QVERIFY(menu->findChild<QAction*>(QStringLiteral("languageSystem"))->isChecked());
    english->trigger();
    QCOMPARE(saved_language(), QStringLiteral("en"));
    QCOMPARE(asked, 1);
    QVERIFY(!w.restartRequested());
    menu->findChild<QAction*>(QStringLiteral("languageSystem"))->trigger();
    QCOMPARE(saved_language(), QString());
    QCOMPARE(asked, 2);
  }

  // Builds the window (with the real model loaded when it is there, so that the model's
  // line and the status bar are filled), shows every page, and walks all its widgets.
  void everyVisibleTextInTheWindowIsTranslated() {
    AppConfig config;
    config.demo_folder = test::scratch_dir();
    config.chats_path = test::scratch_dir() + QStringLiteral("/chats.sqlite");
    window_ = std::make_unique<MainWindow>(config);
    window_->show();
    const QString model = test::shared_file(QStringLiteral("models/stories260K.gguf"));
    if (!model.isEmpty()) {
      QSignalSpy ready(window_.get(), &MainWindow::modelReady);
      window_->openModel(model);
      QVERIFY2(ready.wait(60000), qPrintable(window_->noticeText()));
    }
    QTabWidget* pages = window_->pages();
    for (int i = 0; i < pages->count(); ++i) {
      pages->setCurrentIndex(i);
      for (QTabWidget* inner : pages->widget(i)->findChildren<QTabWidget*>()) {
        for (int j = 0; j < inner->count(); ++j) {
          inner->setCurrentIndex(j);
          QTest::qWait(50);
        }
      }
      QTest::qWait(50);
    }
    const QStringList missing = untranslated_in_window();
    for (const QString& line : missing) qInfo("not translated: %s", qPrintable(line));
    QVERIFY2(missing.isEmpty(), qPrintable(QStringLiteral("%1 text(s) not translated:\n  %2")
                                               .arg(missing.size())
                                               .arg(missing.join(QStringLiteral("\n  ")))));
  }

  // The dialogs a menu opens: Open model, Sampling, Serve this model. With KVSCOPE_UI_SHOTS
  // set (a folder, as dialogs_test has it) each is saved there as zh-*.png to look at.
  void theDialogsAreTranslated() {
    QVERIFY(window_);
    LoadDialog load(
        QString(), LoadSettings{}, load_gpu_catalogue(),
        {false, false,
         QCoreApplication::translate("main", "not in this build (no CUDA toolkit at build time)")},
        window_.get());
    SamplingDialog sampling(SamplingSettings{}, 2048, window_.get());
    ServeDialog* serve = window_->showServeDialog();
    QStringList missing;
    const QList<std::pair<QWidget*, const char*>> dialogs = {{&load, "zh-load-dialog.png"},
                                                             {&sampling, "zh-sampling-dialog.png"},
                                                             {serve, "zh-serve-dialog.png"}};
    for (const auto& [dialog, name] : dialogs) {
      Collector collect(catalogue_names());
      collect.widget(dialog);
      for (QWidget* w : dialog->findChildren<QWidget*>()) collect.widget(w);
      missing << collect.untranslated();
      const QByteArray dir = qgetenv("KVSCOPE_UI_SHOTS");
      if (dir.isEmpty()) continue;
      dialog->show();
      QVERIFY(QTest::qWaitForWindowExposed(dialog));
      QVERIFY(dialog->grab().save(QString::fromLocal8Bit(dir) + QLatin1Char('/') +
                                  QLatin1String(name)));
    }
    serve->close();
    for (const QString& line : missing) qInfo("not translated: %s", qPrintable(line));
    QVERIFY2(missing.isEmpty(), qPrintable(missing.join(QLatin1Char('\n'))));
  }

  // The check can fail: an English text put into the window is reported.
  void anEnglishTextIsReported() {
    QVERIFY(window_);
    const QStringList before = untranslated_in_window();
    auto* label = new QLabel(QStringLiteral("Fragmentation over time"), window_.get());
    label->setObjectName(QStringLiteral("planted"));
    const QStringList after = untranslated_in_window();
    delete label;
    QCOMPARE(after.size(), before.size() + 1);
    QVERIFY(after.contains(QStringLiteral("QLabel#planted: \"Fragmentation over time\"")));
  }

  void cleanupTestCase() { window_.reset(); }
};

}  // namespace kvscope::ui

QTEST_MAIN(kvscope::ui::TranslationTest)
#include "translation_test.moc"
