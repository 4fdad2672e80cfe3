// The live panel's charts follow the app's palette, in the whole window on the real
// stories260K: started in the dark palette, a loaded model's frames and a reply leave every
// chart dark (the RAM chart a split shows, hidden here, too), and View > Dark theme at run
// time restyles each of them both ways, also while the panel is hidden. Each chart is checked
// twice: its QChart (background, title, axis labels) and its pixels, so a chart whose
// settings are right but whose drawing is stale fails as well.
#include <QAbstractAxis>
#include <QAction>
#include <QApplication>
#include <QChart>
#include <QChartView>
#include <QSignalSpy>
#include <QtTest>

#include <memory>

#include "chat/chat_controller.h"
#include "chat/session.h"
#include "panel/live_panel.h"
#include "ui_test_support.h"
#include "window/app_palette.h"
#include "window/app_style.h"
#include "window/main_window.h"

namespace kvscope::ui {
namespace {

// What is wrong with one chart in `palette`, or "" when nothing is.
QString palette_mismatch(QChartView& view, const QPalette& palette) {
  const QChart& chart = *view.chart();
  const QColor base = palette.color(QPalette::Base), text = palette.color(QPalette::Text);
  const QString name = chart.title().isEmpty() ? view.objectName() : chart.title();
  if (chart.backgroundBrush().color() != base) {
    return QStringLiteral("%1: background %2, not %3")
        .arg(name, chart.backgroundBrush().color().name(), base.name());
  }
  if (chart.titleBrush().color() != text) {
    return QStringLiteral("%1: title %2, not %3")
        .arg(name, chart.titleBrush().color().name(), text.name());
  }
  for (const QAbstractAxis* axis : chart.axes()) {
    if (axis->labelsColor() != text) {
      return QStringLiteral("%1: axis labels %2, not %3")
          .arg(name, axis->labelsColor().name(), text.name());
    }
  }
  // Inside the chart's background (inset ~9 px in the view), left of the centred title and
  // above the axis labels: nothing else is drawn there.
  const QImage image = view.grab().toImage();
  const QColor drawn = image.pixelColor(12, 12);
  if (drawn != base) {
    return QStringLiteral("%1: drawn on %2, not %3").arg(name, drawn.name(), base.name());
  }
  return {};
}

// Every chart of the panel, shown or not, against the app's palette now.
QString panel_mismatch(const LivePanel& panel) {
  const QList<QChartView*> views = panel.findChildren<QChartView*>();
  if (views.size() != 4) return QStringLiteral("%1 charts, not 4").arg(views.size());
  for (QChartView* view : views) {
    const QString wrong = palette_mismatch(*view, QApplication::palette());
    if (!wrong.isEmpty()) return wrong;
  }
  return {};
}

QAction* dark_theme_action(const MainWindow& window) {
  for (QAction* action : window.findChildren<QAction*>()) {
    if (action->text() == QStringLiteral("&Dark theme")) return action;
  }
  return nullptr;
}

}  // namespace

class PanelPaletteTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QSettings().clear();
    QApplication::setStyle(new AppStyle);  // as the app
  }

  void theChartsStayDarkThroughAModelAndAReplyAndFollowTheThemeBothWays() {
    KVSCOPE_QT_REQUIRE_SHARED(model, "models/stories260K.gguf");
    QApplication::setPalette(dark_palette());  // as `kvscope --palette dark`
    AppConfig config;
    config.demo_folder = test::scratch_dir();
    auto w = std::make_unique<MainWindow>(config);
    w->show();
    const LivePanel& panel = *w->livePanel();
    QVERIFY(test::load_model(*w, model));
    SamplingSettings s = w->chats()->currentSession()->sampling();
    s.max_tokens = 48;
    w->chats()->currentSession()->setSampling(s);
    QSignalSpy finished(w->chats(), &ChatController::replyFinished);
    w->chats()->sendMessage(QStringLiteral("Once upon a time"));
    QVERIFY(finished.wait(60000));
    QTRY_VERIFY_WITH_TIMEOUT(panel.framesDrawn() > 1, 10000);
    w->livePanel()->drawNow();
    QVERIFY(is_dark(QApplication::palette()));
    QCOMPARE(panel_mismatch(panel), QString());

    // The palette reaches the widgets through posted events: QTRY_ lets them arrive.
    QAction* dark = dark_theme_action(*w);
    QVERIFY(dark && dark->isChecked());
    dark->setChecked(false);
    QVERIFY(!is_dark(QApplication::palette()));
    QTRY_COMPARE_WITH_TIMEOUT(panel_mismatch(panel), QString(), 2000);

    w->setPanelVisible(false);  // hidden widgets get the palette change too
    dark->setChecked(true);
    QTest::qWait(100);
    w->setPanelVisible(true);
    QTRY_COMPARE_WITH_TIMEOUT(panel_mismatch(panel), QString(), 2000);
  }
};

}  // namespace kvscope::ui

QTEST_MAIN(kvscope::ui::PanelPaletteTest)
#include "panel_palette_test.moc"
