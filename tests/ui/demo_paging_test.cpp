// The paged-vs-contiguous demo page: what it shows is engine/sim's run for the settings
// on screen (table, waste bars, chart, block map), changing a control re-runs it, play
// advances the frames, and settings that could never serve a request are reported.
// With KVSCOPE_SHOTS_DIR set it also saves the page at 1280x800 in the light and dark
// palettes (run under xvfb-run for real fonts).
#include <QApplication>
#include <QBarSet>
#include <QComboBox>
#include <QDir>
#include <QLabel>
#include <QLineSeries>
#include <QSlider>
#include <QSpinBox>
#include <QStyleFactory>
#include <QToolButton>
#include <QtTest>

#include "demos/paging/block_map.h"
#include "demos/paging/chart.h"
#include "demos/paging/controls.h"
#include "demos/paging/paging_page.h"
#include "demos/paging/summary.h"
#include "demos/paging/waste_bar.h"
#include "sim/simulation.h"
#include "sim/trace/trace_presets.h"
#include "window/app_palette.h"

namespace kvscope::ui {
namespace {

// engine/sim's run for what the controls say, computed here independently of the page.
SimulationResult expected_run(const PagingDemoControls& c) {
  const PagingSettings s = c.settings();
  TraceSpec spec = find_trace_preset(s.preset).spec;
  spec.n_requests = s.requests;
  spec.seed = static_cast<std::uint64_t>(s.seed);
  spec.max_context = s.max_context;
  return run_simulation(generate_trace(spec), {s.capacity, s.block_size, s.max_context});
}

QString percent(double share) {
  return QStringLiteral("%1%").arg(100.0 * share, 0, 'f', 1);
}

bool same_spans(const SimBlockMap& a, const SimBlockMap& b) {
  if (a.spans.size() != b.spans.size() || a.head_need != b.head_need) return false;
  for (std::size_t i = 0; i < a.spans.size(); ++i) {
    const SimSpan& x = a.spans[i];
    const SimSpan& y = b.spans[i];
    if (x.start != y.start || x.size != y.size || x.owner != y.owner || x.stored != y.stored ||
        x.needed != y.needed) {
      return false;
    }
  }
  return true;
}

}  // namespace

class DemoPagingTest : public QObject {
  Q_OBJECT

 private:
  // Every figure the page shows equals engine/sim's for the settings on screen.
  static void expect_figures(const PagingDemoPage& page) {
    const SimulationResult want = expected_run(*page.controls());
    QVERIFY(page.result() != nullptr);
    QCOMPARE(page.result()->config.block_size, want.config.block_size);
    QCOMPARE(page.result()->trace.size(), want.trace.size());
    const PagingSummaryTable& t = *page.summaryTable();
    using R = PagingSummaryTable;
    for (int c = 0; c < 3; ++c) {
      const SimSummary& m = want.runs[static_cast<std::size_t>(c)].summary;
      QCOMPARE(t.value(R::UsedShare, c).toDouble(), m.used_share());
      QCOMPARE(t.text(R::UsedShare, c), percent(m.used_share()));
      QCOMPARE(t.value(R::ReservedShare, c).toDouble(), m.reserved_share());
      QCOMPARE(t.value(R::InternalShare, c).toDouble(), m.internal_share());
      QCOMPARE(t.value(R::ExternalShare, c).toDouble(), m.external_share());
      QCOMPARE(t.value(R::Admitted, c).toLongLong(), m.admitted);
      QCOMPARE(t.value(R::Finished, c).toLongLong(), m.finished);
      QCOMPARE(t.value(R::PeakRunning, c).toLongLong(), m.peak_running);
      QCOMPARE(t.text(R::PeakRunning, c), QString::number(m.peak_running));
      QCOMPARE(t.value(R::MeanRunning, c).toDouble(), m.mean_running());
      QCOMPARE(t.value(R::Steps, c).toLongLong(), m.steps);
      QCOMPARE(t.value(R::Preemptions, c).toLongLong(), m.preemptions);
      QCOMPARE(t.value(R::MeanWait, c).toDouble(), m.mean_wait());
      QCOMPARE(page.wasteBar()->set(0)->at(c), 100.0 * m.used_share());
      QCOMPARE(page.wasteBar()->set(2)->at(c), 100.0 * m.internal_share());
      const QLineSeries* line = page.utilisationChart()->series(static_cast<std::size_t>(c));
      QVERIFY(line->count() > 1);
      QCOMPARE(line->at(line->count() - 1).x(), static_cast<double>(m.steps - 1));
    }
  }

  // The block map shows each policy's memory after the page's current step.
  static void expect_map_at_current_step(const PagingDemoPage& page) {
    const auto& columns = page.blockMap()->columns();
    QCOMPARE(columns.size(), std::size_t{3});
    for (std::size_t i = 0; i < 3; ++i) {
      PolicySimulation sim(kSimPolicies[i], page.result()->trace, page.result()->config);
      for (std::int64_t s = 0; s < page.currentStep() && !sim.done(); ++s) sim.step();
      QVERIFY2(same_spans(columns[i].map, sim.block_map()),
               sim_policy_name(kSimPolicies[i]).data());
    }
  }

 private slots:
  void initTestCase() {
    QApplication::setStyle(QStyleFactory::create(QStringLiteral("Fusion")));
    QApplication::setPalette(light_palette());
  }

  void showsTheChatRunsFiguresWithoutAModel() {
    PagingDemoPage page;
    QCOMPARE(page.controls()->traceBox()->currentText(), QStringLiteral("chat"));
    QCOMPARE(page.controls()->capacitySpin()->value(), 8192);
    QCOMPARE(page.controls()->blockSizeSpin()->value(), 16);
    QVERIFY(page.errorText().isEmpty());
    expect_figures(page);
    QCOMPARE(page.currentStep(), std::int64_t{0});
    QVERIFY(page.blockMap()->columns()[2].map.spans.empty());
    // The chart's other views: requests admitted so far ends at every request.
    page.utilisationChart()->metricBox()->setCurrentIndex(2);
    const QLineSeries* admitted = page.utilisationChart()->series(2);
    QCOMPARE(admitted->at(admitted->count() - 1).y(), 200.0);
  }

  void changingTheBlockSizeRerunsTheSimulation() {
    PagingDemoPage page;
    page.resize(1280, 800);
    page.show();
    QVERIFY(QTest::qWaitForWindowExposed(&page));
    const double before = page.summaryTable()->value(PagingSummaryTable::UsedShare, 2).toDouble();
    page.controls()->blockSizeSpin()->setValue(128);
    QTRY_COMPARE(page.result()->config.block_size, std::int64_t{128});
    expect_figures(page);
    const double after = page.summaryTable()->value(PagingSummaryTable::UsedShare, 2).toDouble();
    QVERIFY2(after < before, "bigger blocks leave more of each tail empty");
    QCOMPARE(page.blockMap()->cellSlots(), std::int64_t{128});
  }

  void sliderAndSpinBoxMoveTogether() {
    PagingDemoPage page;
    page.controls()->blockSizeSlider()->setValue(40);
    QCOMPARE(page.controls()->blockSizeSpin()->value(), 40);
    page.controls()->blockSizeSpin()->setValue(1);
    QCOMPARE(page.controls()->blockSizeSlider()->value(), 1);
    QTRY_COMPARE(page.result()->config.block_size, std::int64_t{1});
    expect_figures(page);
    QCOMPARE(page.summaryTable()->value(PagingSummaryTable::InternalShare, 2).toDouble(), 0.0);
  }

  void choosingAPresetLoadsItsMemoryAndContext() {
    PagingDemoPage page;
    page.controls()->traceBox()->setCurrentText(QStringLiteral("long-documents"));
    const TracePreset& p = find_trace_preset("long-documents");
    QCOMPARE(page.controls()->capacitySpin()->value(), static_cast<int>(p.capacity));
    QCOMPARE(page.controls()->maxContextSpin()->value(), static_cast<int>(p.spec.max_context));
    QTRY_COMPARE(page.result()->config.capacity, p.capacity);
    expect_figures(page);
    QCOMPARE(page.controls()->seedSpin()->value(), 1);  // the CLI's default seed
    TraceSpec seed5 = p.spec;
    seed5.seed = 5;
    const std::int64_t prompt5 = generate_trace(seed5).front().prompt;
    QVERIFY(prompt5 != page.result()->trace.front().prompt);
    page.controls()->seedSpin()->setValue(5);
    QTRY_COMPARE(page.result()->trace.front().prompt, prompt5);
    expect_figures(page);
  }

  void playAdvancesFramesAndTheMapFollows() {
    PagingDemoPage page;
    page.controls()->playButton()->click();
    QVERIFY(page.isPlaying());
    QTRY_VERIFY(page.currentStep() >= 30);
    page.controls()->playButton()->click();
    QVERIFY(!page.isPlaying());
    const std::int64_t paused_at = page.currentStep();
    QTest::qWait(150);
    QCOMPARE(page.currentStep(), paused_at);
    QCOMPARE(page.controls()->positionSlider()->value(), static_cast<int>(paused_at));
    expect_map_at_current_step(page);
    QVERIFY(!page.blockMap()->columns()[2].map.spans.empty());
    QVERIFY(page.blockMap()->columns()[2].status.contains(
        QStringLiteral("step %1").arg(paused_at - 1)));
    QCOMPARE(page.utilisationChart()->marker()->count(), 2);
    QCOMPARE(page.utilisationChart()->marker()->at(0).x(), static_cast<double>(paused_at - 1));
  }

  void stepAndSeekShowTheFrameOfThatStep() {
    PagingDemoPage page;
    page.controls()->stepButton()->click();
    QCOMPARE(page.currentStep(), std::int64_t{1});
    expect_map_at_current_step(page);
    page.seek(700);
    QCOMPARE(page.currentStep(), std::int64_t{700});
    expect_map_at_current_step(page);
    page.controls()->positionSlider()->setValue(250);  // a drag back starts over
    QCOMPARE(page.currentStep(), std::int64_t{250});
    expect_map_at_current_step(page);
    page.controls()->restartButton()->click();
    QCOMPARE(page.currentStep(), std::int64_t{0});
    const std::int64_t last = page.result()->max_steps();
    page.seek(last + 50);  // past the end: every policy done
    QCOMPARE(page.currentStep(), last);
    QVERIFY(page.blockMap()->columns()[0].status.contains(QStringLiteral("all served")));
  }

  void impossibleSettingsAreReportedNotRun() {
    PagingDemoPage page;
    page.controls()->capacitySpin()->setValue(1024);  // chat's max context is 2048
    QTRY_VERIFY(page.result() == nullptr);
    QVERIFY(page.errorText().contains(QStringLiteral("exceeds the capacity of 1024")));
    QVERIFY(page.blockMap()->columns().empty());
    QCOMPARE(page.summaryTable()->text(PagingSummaryTable::UsedShare, 2), QStringLiteral("\u2014"));
    page.controls()->playButton()->click();
    QVERIFY(!page.isPlaying());
    page.controls()->maxContextSpin()->setValue(1024);
    QTRY_VERIFY(page.result() != nullptr);
    QVERIFY(page.errorText().isEmpty());
    expect_figures(page);
  }

  // The error's red follows View > Dark theme: set for the theme it was shown in, it read
  // 1.5:1 or worse after a switch.
  void theErrorsRedFollowsTheTheme() {
    const QPalette before = QApplication::palette();
    QWidget window;  // the page inside a window, as in the app (a window is told apart)
    auto* page = new PagingDemoPage(&window);
    page->controls()->capacitySpin()->setValue(1024);
    QTRY_VERIFY(page->result() == nullptr);
    const auto* error = page->findChild<QLabel*>(QStringLiteral("pagingError"));
    QVERIFY(error != nullptr);
    QVERIFY(error->styleSheet().contains(error_text_color(before).name()));
    const QPalette other = is_dark(before) ? light_palette() : dark_palette();
    // the palette reaches the widgets through posted events: QTRY_ lets them arrive
    QApplication::setPalette(other);
    QTRY_VERIFY2(error->styleSheet().contains(error_text_color(other).name()),
                 qPrintable(error->styleSheet()));
    QApplication::setPalette(before);
    QTRY_VERIFY(error->styleSheet().contains(error_text_color(before).name()));
  }

  void screenshots() {
    const QString dir = qEnvironmentVariable("KVSCOPE_SHOTS_DIR");
    if (dir.isEmpty()) QSKIP("set KVSCOPE_SHOTS_DIR to save the page's screenshots");
    QVERIFY(QDir().mkpath(dir));
    for (const bool dark : {false, true}) {
      QApplication::setPalette(dark ? dark_palette() : light_palette());
      PagingDemoPage page;
      page.resize(1280, 800);
      page.show();
      QVERIFY(QTest::qWaitForWindowExposed(&page));
      page.seek(1500);
      QTest::qWait(200);
      const QString path = dir + (dark ? "/demo-paging-dark.png" : "/demo-paging-light.png");
      QVERIFY(page.grab().save(path));
      page.controls()->traceBox()->setCurrentText(QStringLiteral("api-burst"));
      page.rerunNow();
      page.seek(150);
      QTest::qWait(200);
      QVERIFY(page.grab().save(
          dir + (dark ? "/demo-paging-burst-dark.png" : "/demo-paging-burst-light.png")));
      // Long documents with one-slot blocks: 32768 blocks, more than the map has cells.
      page.controls()->traceBox()->setCurrentText(QStringLiteral("long-documents"));
      page.controls()->blockSizeSpin()->setValue(1);
      page.rerunNow();
      page.seek(900);
      QTest::qWait(200);
      QCOMPARE(page.blockMap()->cellSlots(), std::int64_t{0});  // rows of slots, no cells
      QVERIFY(page.blockMap()->rowSlots() > 200);
      QVERIFY(page.grab().save(
          dir + (dark ? "/demo-paging-long-dark.png" : "/demo-paging-long-light.png")));
    }
    QApplication::setPalette(light_palette());
  }
};

}  // namespace kvscope::ui

QTEST_MAIN(kvscope::ui::DemoPagingTest)
#include "demo_paging_test.moc"
