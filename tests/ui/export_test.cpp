// Export from the menus (issue #15): File > Export > Chat as Markdown / JSON, Panel snapshot
// and Block map, and every chart's Save as PNG / SVG / CSV, driven through their actions
// with the save dialog answered by a chooser; the files' contents are checked. The panel
// snapshot case runs stories260K (skipped without it).
#include <QAction>
#include <QFile>
#include <QImage>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSignalSpy>
#include <QStackedWidget>
#include <QtTest>

#include <memory>

#include "chat/chat_controller.h"
#include "chat/session.h"
#include "panel/block_map_widget.h"
#include "panel/live_panel.h"
#include "panel/memory_chart.h"
#include "ui_test_support.h"
#include "widgets/chart_frame.h"
#include "widgets/export_file.h"
#include "window/main_window.h"

namespace kvscope::ui {
namespace {

QByteArray read_all(const QString& path) {
  QFile f(path);
  return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

}  // namespace

class ExportTest : public QObject {
  Q_OBJECT

 private:
  QString next_path_;  // what the "save dialog" answers next
  QStringList asked_;  // the suggested names it was shown

  std::unique_ptr<MainWindow> make_window() {
    AppConfig config;
    config.demo_folder = test::scratch_dir();
    auto w = std::make_unique<MainWindow>(config);
    w->show();
    return w;
  }

  QString export_to(QObject* owner, const char* action, const QString& file) {
    next_path_ = test::scratch_dir() + QLatin1Char('/') + file;
    auto* a = owner->findChild<QAction*>(QLatin1String(action));
    if (!a) return {};
    a->trigger();
    return next_path_;
  }

 private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    set_export_path_chooser([this](const QString&, const QString& suggested, const QString&) {
      asked_ << suggested;
      return next_path_;
    });
  }

  void aChatExportsAsMarkdownAndJsonWithItsModelSettingsAndReplyNumbers() {
    auto w = make_window();
    ChatSession* s = w->chats()->currentSession();
    SamplingSettings sampling;
    sampling.params.temperature = 0.3f;
    sampling.max_tokens = 77;
    s->setSampling(sampling);
    s->setModel({QStringLiteral("/models/tiny.gguf"), QStringLiteral("tiny.gguf"), 10, 20});
    s->beginUserTurn(QStringLiteral("Tell me, briefly: why pages?"));
    s->replyStarted(9);
    s->appendReplyText(QStringLiteral("Because "), 1);
    s->appendReplyText(QStringLiteral("blocks."), 12);
    s->finishReply({s->id(), FinishReason::EndOfGeneration, {}, 9, 12});

    const QString md_path = export_to(w.get(), "exportChatMarkdown", "chat.md");
    QCOMPARE(asked_.last(), QStringLiteral("Tell-me-briefly-why-pages-.md"));
    const QString md = QString::fromUtf8(read_all(md_path));
    QVERIFY2(md.startsWith(QStringLiteral("# Tell me, briefly: why pages?\n")), qPrintable(md));
    QVERIFY(md.contains(QStringLiteral("**Model:** tiny.gguf")));
    QVERIFY(md.contains(QStringLiteral("temperature 0.3")));
    QVERIFY(md.contains(QStringLiteral("at most 77 tokens")));
    QVERIFY(md.contains(QStringLiteral("## You\n\nTell me, briefly: why pages?")));
    QVERIFY2(md.contains(QStringLiteral("*12 tokens \u00b7 ")), qPrintable(md));
    QVERIFY(md.contains(QStringLiteral("tokens/s")));
    QVERIFY(md.contains(QStringLiteral("end of generation")));
    QVERIFY(md.contains(QStringLiteral("Because blocks.")));

    const QJsonObject j =
        QJsonDocument::fromJson(read_all(export_to(w.get(), "exportChatJson", "chat.json")))
            .object();
    QCOMPARE(j["format"].toString(), QStringLiteral("kvscope-chat"));
    QCOMPARE(j["model"].toObject()["path"].toString(), QStringLiteral("/models/tiny.gguf"));
    QCOMPARE(j["sampling"].toObject()["max_tokens"].toInt(), 77);
    const QJsonArray messages = j["messages"].toArray();
    QCOMPARE(messages.size(), 2);
    const QJsonObject reply = messages[1].toObject();
    QCOMPARE(reply["text"].toString(), QStringLiteral("Because blocks."));
    QCOMPARE(reply["tokens"].toInt(), 12);
    QCOMPARE(reply["prompt_tokens"].toInt(), 9);
    QCOMPARE(reply["finish_reason"].toString(), QStringLiteral("end of generation"));
    QVERIFY(reply.contains("tokens_per_second"));
  }

  // Every chart of every page: PNG at size x dpr, SVG a drawing, CSV its series.
  void everyChartSavesPngSvgAndCsv() {
    auto w = make_window();
    const QList<ChartFrame*> charts = w->findChildren<ChartFrame*>();
    QVERIFY2(charts.size() >= 6, qPrintable(QString::number(charts.size())));
    int with_points = 0;
    for (ChartFrame* chart : charts) {
      // The RAM side's memory chart is drawn only for a model split between GPU and CPU
      // (tests/ui/split_panel_test.cpp); this window's model runs on one backend.
      if (chart == w->livePanel()->ramMemoryChart()) continue;
      // Bring its page (and any tab it sits in) to the front, as a user would.
      for (QWidget* p = chart; p && p != w.get(); p = p->parentWidget()) {
        if (auto* stack = qobject_cast<QStackedWidget*>(p->parentWidget())) {
          stack->setCurrentWidget(p);
        }
      }
      QTRY_VERIFY(chart->isVisible() && chart->width() > 0);
      const QString name = chart->exportName();
      QVERIFY(!name.isEmpty());
      const QImage png(export_to(chart, "exportPng", name + ".png"));
      QVERIFY2(!png.isNull(), qPrintable(name));
      const qreal dpr = chart->devicePixelRatioF();
      QCOMPARE(png.size(), (QSizeF(chart->size()) * dpr).toSize());
      const QByteArray svg = read_all(export_to(chart, "exportSvg", name + ".svg"));
      QVERIFY2(svg.contains("<svg") && svg.contains("</svg>"), qPrintable(name));
      const QStringList csv =
          QString::fromUtf8(read_all(export_to(chart, "exportCsv", name + ".csv")))
              .split('\n', Qt::SkipEmptyParts);
      QVERIFY2(!csv.isEmpty() && csv[0] == QStringLiteral("series,x,y"), qPrintable(name));
      QCOMPARE(csv.join('\n') + '\n', chart->seriesCsv());
      if (csv.size() > 1) ++with_points;
    }
    QVERIFY2(with_points >= 1, "no chart had a point to export (the planner pages have some)");
  }

  void panelSnapshotAndBlockMapFromTheFileMenu() {
    KVSCOPE_QT_REQUIRE_SHARED(model, "models/stories260K.gguf");
    auto w = make_window();
    QSignalSpy ready(w.get(), &MainWindow::modelReady);
    w->openModel(model);
    QVERIFY(ready.wait(60000));
    QSignalSpy finished(w->chats(), &ChatController::replyFinished);
    w->chats()->sendMessage(QStringLiteral("Once upon a time"));
    QVERIFY(finished.wait(60000));
    QTRY_VERIFY_WITH_TIMEOUT(
        w->livePanel()->lastFrame().has_value() && w->livePanel()->lastFrame()->cache.n_used > 0,
        10000);
    const CacheSnapshot cache = w->livePanel()->lastFrame()->cache;
    const QJsonObject j =
        QJsonDocument::fromJson(read_all(export_to(w.get(), "exportPanelSnapshot", "panel.json")))
            .object();
    QCOMPARE(j["format"].toString(), QStringLiteral("kvscope-panel-snapshot"));
    QCOMPARE(j["model"].toString(), w->chats()->model()->name);
    const QJsonObject totals = j["totals"].toObject();
    QCOMPARE(totals["n_blocks"].toInteger(), cache.n_blocks);
    QCOMPARE(totals["n_used"].toInteger(), cache.n_used);
    QCOMPARE(totals["filled_slots"].toInteger(), cache.filled_slots);
    QCOMPARE(j["groups"].toArray().size(), static_cast<qsizetype>(cache.groups.size()));
    QVERIFY(j["memory"].toObject()["weights"].toInteger() > 0);

    const QImage map(export_to(w.get(), "exportBlockMap", "map.png"));
    QVERIFY(!map.isNull());
    BlockMapWidget* widget = w->livePanel()->blockMap();
    QCOMPARE(map.size(), (QSizeF(widget->size()) * widget->devicePixelRatioF()).toSize());
  }
};

}  // namespace kvscope::ui

QTEST_MAIN(kvscope::ui::ExportTest)
#include "export_test.moc"
