// The "What fits" page's KV chart: its curves are kv_footprint's pool bytes for the model
// and for the same shape as MHA, GQA and MQA in f16, int8 and int4, computed here from the
// presets independently of the page; the budget line is the plan's KV budget.
#include <QComboBox>
#include <QLineSeries>
#include <QSpinBox>
#include <QtTest>

#include "fits/controls.h"
#include "fits/fits_page.h"
#include "fits/kv_chart.h"
#include "fits_test_presets.h"
#include "plan/kv_curves.h"
#include "plan/memory_model.h"
#include "widgets/slider_spin.h"

namespace kvscope::ui {

using namespace fits_test;

class FitsKvChartTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

  void kvCurvesAreFootprintsOfTheMhaGqaAndMqaShapesInEveryDtype() {
    FitsPage page;
    page.controls()->batch()->setValue(3);
    const FitsKvChart* chart = page.kvChart();
    const double unit = chart->yUnitBytes();
    // Llama-2-7B is MHA with 32 heads: GQA is the 8-KV-head variant, MQA one head.
    const std::int64_t heads[3] = {32, 8, 1};
    const KvDtype dtypes[3] = {KvDtype::F16, KvDtype::Int8, KvDtype::Int4};
    for (int l = 0; l < 3; ++l) {
      for (int d = 0; d < 3; ++d) {
        QVERIFY(chart->variantSeries(l, d)->isVisible());
        expect_curve(chart->variantSeries(l, d), unit,
                     shape_with("llama-2-7b", heads[l], dtypes[d]), 3);
      }
    }
    expect_curve(chart->ownSeries(), unit, shape_with("llama-2-7b", 32, KvDtype::F16), 3);
    // MQA at int4 is 32 x 4 (heads x bits) smaller than MHA at f16, give or take scales.
    QVERIFY(chart->variantSeries(2, 2)->points().back().y() <
            chart->variantSeries(0, 0)->points().back().y() / 64);

    // Mistral's own shape is already GQA (8 KV heads) with a 4096-token window.
    select_text(page.controls()->modelBox(), QStringLiteral("Mistral-7B"));
    select_dtype(page.controls()->kDtypeBox(), KvDtype::Int8);
    expect_curve(
        chart->ownSeries(), chart->yUnitBytes(),
        [] {
          ModelSpec s = model_preset("mistral-7b-v0.1").spec;
          return default_kv_config(s, KvDtype::Int8, KvDtype::F16);
        }(),
        3);
    expect_curve(chart->variantSeries(1, 0), chart->yUnitBytes(),
                 shape_with("mistral-7b-v0.1", 8, KvDtype::F16), 3);

    // Gemma 3: the sliding layers' pool stops growing at its cap (4 sequences, or the batch,
    // of the window plus a chunk), so the model's curve ends far below a full cache's.
    select_dtype(page.controls()->kDtypeBox(), KvDtype::F16);
    select_text(page.controls()->modelBox(), QStringLiteral("Gemma-3-1B"));
    const KvCacheConfig gemma =
        default_kv_config(model_preset("gemma-3-1b").spec, KvDtype::F16, KvDtype::F16);
    expect_curve(chart->ownSeries(), chart->yUnitBytes(), gemma, 3);
    KvCacheConfig full = gemma;
    for (LayerGroupConfig& g : full.groups) g.window = 0;
    const double last = chart->ownSeries()->points().back().y() * chart->yUnitBytes();
    QVERIFY(last <
            static_cast<double>(kv_footprint(full, 3, gemma.max_context, 512).pool_bytes_needed) /
                3);
  }

  void theBudgetLineIsThePlansKvBudget() {
    FitsPage page;
    page.controls()->batch()->setValue(16);  // 16 x 2 GiB of KV: past a 4090's budget
    Choice c;
    on_gpu(c, "rtx-4090");
    c.batch = 16;
    c.context = 4096;
    const MemoryPlan plan = plan_memory(request_for(c));
    const FitsKvChart* chart = page.kvChart();
    QVERIFY(chart->budgetSeries()->isVisible());
    QCOMPARE(chart->budgetSeries()->count(), 2);
    QCOMPARE(chart->budgetSeries()->at(0).y() * chart->yUnitBytes(),
             static_cast<double>(plan.kv_budget_bytes));
    QCOMPARE(chart->contextSeries()->at(0).x(), 4096.0);
    QCOMPARE(chart->yUnitBytes(), 1024.0 * 1024.0 * 1024.0);
  }

  void gqaIsTheModelsOwnSharingElseEightOrTheLargestDivisorBelow() {
    ModelSpec s = model_preset("llama-2-13b").spec;  // 40 heads, MHA
    QCOMPARE(layout_kv_heads(s, AttentionLayout::Mha), 40);
    QCOMPARE(layout_kv_heads(s, AttentionLayout::Gqa), 8);
    QCOMPARE(layout_kv_heads(s, AttentionLayout::Mqa), 1);
    s.n_heads = s.n_kv_heads = 28;
    QCOMPARE(layout_kv_heads(s, AttentionLayout::Gqa), 7);
    s.n_heads = s.n_kv_heads = 6;
    QCOMPARE(layout_kv_heads(s, AttentionLayout::Gqa), 3);
    s.n_heads = s.n_kv_heads = 7;  // no sharing possible: no GQA curve
    QCOMPARE(layout_kv_heads(s, AttentionLayout::Gqa), 0);
    s.n_heads = 64;
    s.n_kv_heads = 16;  // already grouped: its own count
    QCOMPARE(layout_kv_heads(s, AttentionLayout::Gqa), 16);
  }

  void aModelWithoutAGqaLayoutHidesThoseCurves() {
    ModelSpec s = model_preset("llama-2-7b").spec;
    s.n_heads = s.n_kv_heads = 7;
    s.head_dim = 128;
    s.dim = 7 * 128;
    PlanRequest r = make_plan_request(s, {1000, 1000, "test"}, KvDtype::F16, KvDtype::F16);
    r.budget.total_bytes = std::int64_t{1} << 30;
    const std::vector<KvCurve> curves = kv_curves(r, 8);
    QCOMPARE(curves.size(), std::size_t{7});  // the model, then MHA and MQA x 3 dtypes
    FitsKvChart chart;
    chart.setCurves(curves, plan_memory(r).kv_budget_bytes, 100);
    for (int d = 0; d < FitsKvChart::kDtypes; ++d) {
      QVERIFY(chart.variantSeries(0, d)->isVisible());
      QVERIFY(!chart.variantSeries(1, d)->isVisible());
      QCOMPARE(chart.variantSeries(1, d)->count(), 0);
      QVERIFY(chart.variantSeries(2, d)->isVisible());
    }
  }
};

}  // namespace kvscope::ui

QTEST_MAIN(kvscope::ui::FitsKvChartTest)
#include "fits_kv_chart_test.moc"
