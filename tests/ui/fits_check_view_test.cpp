// "Check against the engine" on the "What fits" page: the button asks once and waits for
// the answer; a PlanCheck is shown predicted beside allocated, with whether it agrees.
#include <QLabel>
#include <QPushButton>
#include <QSignalSpy>
#include <QtTest>

#include "fits/check_view.h"
#include "fits/fits_page.h"
#include "fits_test_presets.h"

namespace kvscope::ui {

using namespace fits_test;

namespace {

ModelInfo some_model() {
  ModelInfo info;
  info.path = QStringLiteral("/m.gguf");
  info.name = QStringLiteral("m");
  info.spec = model_preset("llama-2-7b").spec;
  info.weights = {1000, 1000, "exact"};
  return info;
}

}  // namespace

class FitsCheckViewTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

  void aPlanCheckIsShownPredictedBesideAllocated() {
    FitsPage page;
    page.setLoadedModel(some_model());
    const FitsCheckView* view = page.checkView();
    page.showPlanCheck(sample_check(true));
    QCOMPARE(view->cell(FitsCheckView::Pool, FitsCheckView::Predicted)->text(), human(163840));
    QCOMPARE(view->cell(FitsCheckView::Pool, FitsCheckView::Allocated)->toolTip(),
             QStringLiteral("163,840 bytes"));
    QCOMPARE(view->cell(FitsCheckView::Used, FitsCheckView::Allocated)->text(),
             human(3 * 1024 * 1024 + 5));
    QCOMPARE(view->cell(FitsCheckView::Tokens, FitsCheckView::Predicted)->text(),
             QStringLiteral("1,200"));
    QCOMPARE(view->cell(FitsCheckView::Tokens, FitsCheckView::Allocated)->text(),
             QStringLiteral("1,200"));
    QVERIFY(view->statusLabel()->text().contains("Agrees to the byte on CPU (1 threads)"));
    QVERIFY(view->statusLabel()->text().contains("the next token was refused"));

    page.showPlanCheck(sample_check(false));
    QCOMPARE(view->cell(FitsCheckView::Tokens, FitsCheckView::Allocated)->text(),
             QStringLiteral("1,184"));
    QVERIFY(view->statusLabel()->text().contains("Differs"));

    page.showPlanCheckError(QStringLiteral("the engine is busy"));
    QVERIFY(view->statusLabel()->text().contains("the engine is busy"));
    QVERIFY(view->cell(FitsCheckView::Pool, FitsCheckView::Predicted)->text().isEmpty());
    QVERIFY(view->button()->isEnabled());
  }

  // A split engine's check (run/plan_check.h: PlanCheck::split) adds each side's rows, and a
  // side that differs makes the whole check differ; a check without a split hides them again.
  // The bytes are SmolLM2's split 15/30 under a budget (tests/kernels/split_checks_test.cpp).
  void aSplitsCheckShowsEachSide() {
    FitsPage page;
    page.setLoadedModel(some_model());
    const FitsCheckView* view = page.checkView();
    PlanCheck check = sample_check(true);
    SplitCheck split;
    split.plan.gpu_layers = 15;
    split.gpu_layers = 15;
    split.gpu = {33246720, 33246720, 13086720, 13086720};
    split.cpu = {63330048, 63330048, 13086720, 13086720};
    check.split = split;
    page.showPlanCheck(check);
    QVERIFY(view->splitRowsShown());
    QVERIFY(view->cell(FitsCheckView::CpuPool, FitsCheckView::Allocated)->isVisibleTo(view));
    QCOMPARE(view->cell(FitsCheckView::GpuLayers, FitsCheckView::Predicted)->text(),
             QStringLiteral("15"));
    QCOMPARE(view->cell(FitsCheckView::GpuWeights, FitsCheckView::Allocated)->toolTip(),
             QStringLiteral("33,246,720 bytes"));
    QCOMPARE(view->cell(FitsCheckView::CpuWeights, FitsCheckView::Predicted)->text(),
             human(63330048));
    QCOMPARE(view->cell(FitsCheckView::GpuPool, FitsCheckView::Predicted)->text(), human(13086720));
    QVERIFY(view->statusLabel()->text().contains("Agrees to the byte"));

    check.split->cpu.allocated_pool_bytes = 12902400;  // the CPU's pools one block short
    page.showPlanCheck(check);
    QCOMPARE(view->cell(FitsCheckView::CpuPool, FitsCheckView::Allocated)->text(), human(12902400));
    QVERIFY(view->statusLabel()->text().contains("Differs"));

    page.showPlanCheck(sample_check(true));
    QVERIFY(!view->splitRowsShown());
    QVERIFY(!view->cell(FitsCheckView::CpuPool, FitsCheckView::Allocated)->isVisibleTo(view));
  }

  void theButtonAsksOnceAndOnlyWithAModel() {
    FitsPage page;
    QSignalSpy checks(&page, &FitsPage::checkRequested);
    QPushButton* button = page.checkView()->button();
    QVERIFY(!button->isEnabled());
    page.setLoadedModel(some_model());
    QVERIFY(button->isEnabled());
    button->click();
    QCOMPARE(checks.count(), 1);
    QVERIFY(!button->isEnabled());  // until the answer comes
    QCOMPARE(page.checkView()->statusLabel()->text(), QStringLiteral("Filling the cache\u2026"));
    page.showPlanCheck(sample_check(true));
    QVERIFY(button->isEnabled());
    page.setLoadedModel(std::nullopt);
    QVERIFY(!button->isEnabled());
    QVERIFY(
        page.checkView()->cell(FitsCheckView::Pool, FitsCheckView::Predicted)->text().isEmpty());
  }
};

}  // namespace kvscope::ui

QTEST_MAIN(kvscope::ui::FitsCheckViewTest)
#include "fits_check_view_test.moc"
