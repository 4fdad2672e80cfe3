// The "What fits" page: driving its sliders, spin boxes and lists shows exactly what
// engine/plan computes for the same request (plan_memory, max_context, max_batch,
// roofline_decode, explain_plan), built here independently of the page's own request
// code; the loaded model's entry plans its exact weights. One test times an update; with
// KVSCOPE_SHOTS_DIR set another saves screenshots at 1280x800 in both palettes.
#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QElapsedTimer>
#include <QLabel>
#include <QLocale>
#include <QMainWindow>
#include <QMenuBar>
#include <QSlider>
#include <QSpinBox>
#include <QStatusBar>
#include <QTabWidget>
#include <QTextEdit>
#include <QToolBar>
#include <QtTest>

#include <algorithm>
#include <vector>

#include "fits/controls.h"
#include "fits/fits_page.h"
#include "fits/kv_chart.h"
#include "fits/stack_bar.h"
#include "fits/summary.h"
#include "fits_test_presets.h"
#include "model/model.h"
#include "plan/plan_explainer.h"
#include "plan/solvers.h"
#include "ui_test_support.h"
#include "widgets/eliding_combo_box.h"
#include "widgets/slider_spin.h"
#include "window/app_palette.h"

namespace kvscope::ui {
namespace {

using namespace fits_test;

// Every number the page shows equals engine/plan's for `r` at `bandwidth`.
void expect_shown(const FitsPage& page, const PlanRequest& r, double bandwidth) {
  const MemoryPlan plan = plan_memory(r);
  const MaxContext mc = max_context(r);
  const std::int64_t mb = max_batch(r);
  const RooflineEstimate roof = roofline_decode(r, bandwidth);
  const FitsSummary* s = page.summary();
  // A model that does not fit a GPU whole is answered with its layer split (checked by
  // aModelLargerThanTheGpuIsAnsweredWithItsLayerSplit); the whole-model numbers stay.
  const bool split = !plan.fits && r.backend == PlanBackend::Cuda && r.budget.total_bytes > 0;
  QCOMPARE(page.answers().split.has_value(), split);
  const QString verdict =
      plan.fits ? QStringLiteral("Fits, %1 to spare").arg(human(plan.margin_bytes))
                : QStringLiteral("Does not fit, %1 short").arg(human(-plan.margin_bytes));
  if (!split) QCOMPARE(s->verdictLabel()->text(), verdict);
  QCOMPARE(s->maxContextLabel()->text(),
           QStringLiteral("%1 tokens%2")
               .arg(digits(mc.tokens), mc.limited_by_max_context ? " (the model's limit)" : ""));
  QCOMPARE(s->maxBatchLabel()->text(), digits(mb));
  const QLocale english(QLocale::English);
  QString speed = QStringLiteral("%1 tokens/s").arg(english.toString(roof.tokens_per_s, 'f', 1));
  if (r.batch > 1)
    speed += QStringLiteral(" (%1 per sequence)")
                 .arg(english.toString(roof.tokens_per_s_per_sequence, 'f', 1));
  if (!split) QCOMPARE(s->rooflineLabel()->text(), speed);
  const FitsStackBar* bar = s->stackBar();
  QCOMPARE(bar->partBytes(FitsStackBar::Weights), plan.weights.bytes);
  QCOMPARE(bar->partBytes(FitsStackBar::Kv), plan.kv.pool_bytes_needed);
  QCOMPARE(bar->partBytes(FitsStackBar::Workspace), plan.workspace.total());
  QCOMPARE(bar->partBytes(FitsStackBar::Free), std::max<std::int64_t>(0, plan.margin_bytes));
  QCOMPARE(bar->neededBytes(), plan.total_needed);  // the planner's sum, not the bar's
  QCOMPARE(bar->shortBytes(), std::max<std::int64_t>(0, -plan.margin_bytes));
  QCOMPARE(bar->usableBytes(), plan.usable_bytes);
  QCOMPARE(bar->totalBytes(), r.budget.total_bytes);
  QCOMPARE(page.formula()->toPlainText(), QString::fromStdString(explain_plan(r, plan, roof)));
}

}  // namespace

class FitsPageTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

  void theDefaultPlanIsLlama2OnAnRtx4090AsEnginePlanComputesIt() {
    FitsPage page;
    QCOMPARE(page.controls()->modelBox()->currentText(), QStringLiteral("Llama-2-7B"));
    QVERIFY(page.controls()->gpuBox()->currentText().startsWith("GeForce RTX 4090"));
    Choice c;
    on_gpu(c, "rtx-4090");
    c.context = model_preset("llama-2-7b").spec.context_length;
    QCOMPARE(page.controls()->context()->value(), c.context);
    expect_shown(page, request_for(c), gpu_preset("rtx-4090").bandwidth_gb_s);
  }

  void movingTheContextSliderUpdatesEveryNumber() {
    FitsPage page;
    Choice c;
    on_gpu(c, "rtx-4090");
    for (const int context : {1, 17, 1000, 4096}) {
      page.controls()->context()->slider()->setValue(context);
      QCOMPARE(page.controls()->context()->spinBox()->value(), context);
      c.context = context;
      expect_shown(page, request_for(c), gpu_preset("rtx-4090").bandwidth_gb_s);
    }
  }

  void theBatchSpinBoxChangesTheLongestContextAndTheBar() {
    FitsPage page;
    Choice c;
    on_gpu(c, "rtx-4090");
    c.context = 4096;
    for (const int batch : {2, 9, 24, 200}) {
      page.controls()->batch()->spinBox()->setValue(batch);
      QCOMPARE(page.controls()->batch()->slider()->value(), batch);
      c.batch = batch;
      expect_shown(page, request_for(c), gpu_preset("rtx-4090").bandwidth_gb_s);
    }
    QVERIFY(!plan_memory(request_for(c)).fits);  // batch 200 of 4096 tokens is too much
  }

  void gpuPresetsDtypesWeightsAndUtilisationAllReachThePlan() {
    FitsPage page;
    FitsControls* controls = page.controls();
    select_text(controls->modelBox(), QStringLiteral("Meta-Llama-3-8B"));
    select_text(controls->gpuBox(), QStringLiteral("H100 80GB"));
    select_text(controls->weightTypeBox(), QStringLiteral("q8_0"));
    select_dtype(controls->kDtypeBox(), KvDtype::Int8);
    select_dtype(controls->vDtypeBox(), KvDtype::Int4);
    controls->utilisationPercent()->slider()->setValue(75);
    controls->batch()->setValue(32);
    controls->context()->setValue(6000);
    Choice c;
    c.model = "llama-3-8b";
    c.weights = WeightType::Q8_0;
    c.k = KvDtype::Int8;
    c.v = KvDtype::Int4;
    on_gpu(c, "h100-sxm");
    c.utilisation = 0.75;
    c.batch = 32;
    c.context = 6000;
    expect_shown(page, request_for(c), gpu_preset("h100-sxm").bandwidth_gb_s);
    // The custom boxes show the preset's numbers but do not take part.
    QCOMPARE(controls->customMemoryGib()->value(), 80.0);
    QVERIFY(!controls->customMemoryGib()->isEnabled());

    controls->backendBox()->setCurrentIndex(
        controls->backendBox()->findData(int(PlanBackend::Cpu)));
    c.backend = PlanBackend::Cpu;
    expect_shown(page, request_for(c), gpu_preset("h100-sxm").bandwidth_gb_s);
  }

  void aCustomSizeAndBandwidthArePlannedAsGiven() {
    FitsPage page;
    FitsControls* controls = page.controls();
    select_text(controls->gpuBox(), QStringLiteral("Custom size"));
    QVERIFY(controls->customMemoryGib()->isEnabled());
    controls->customMemoryGib()->setValue(12.5);
    controls->bandwidthGbS()->setValue(300);
    controls->context()->setValue(2048);
    Choice c;
    c.memory = std::int64_t{25} << 29;  // 12.5 GiB
    c.context = 2048;
    expect_shown(page, request_for(c), 300);
  }

  void aPlanThatDoesNotFitSaysHowMuchIsShort() {
    FitsPage page;
    select_text(page.controls()->modelBox(), QStringLiteral("Llama-2-70B"));
    select_text(page.controls()->weightTypeBox(), QStringLiteral("f16"));
    select_text(page.controls()->gpuBox(), QStringLiteral("GeForce RTX 3060"));
    Choice c;
    c.model = "llama-2-70b";
    c.weights = WeightType::F16;
    on_gpu(c, "rtx-3060-12gb");
    c.context = 4096;
    const MemoryPlan plan = plan_memory(request_for(c));
    QVERIFY(!plan.fits);
    expect_shown(page, request_for(c), gpu_preset("rtx-3060-12gb").bandwidth_gb_s);
    QCOMPARE(page.summary()->maxContextLabel()->text(), QStringLiteral("0 tokens"));
    QCOMPARE(page.summary()->maxBatchLabel()->text(), QStringLiteral("0"));
    QVERIFY(page.summary()->stackBar()->shortBytes() > 0);
  }

  // #40: Qwen3-14B at q4_k_m (8.3 GiB) and 16k tokens on an 8 GB RTX 4060: "fits with 25 of
  // 40 layers on the GPU", each side's bytes and the split's roofline as engine/plan's
  // plan_layer_split gives them; a count chosen by hand moves the answer.
  void aModelLargerThanTheGpuIsAnsweredWithItsLayerSplit() {
    FitsPage page;
    FitsControls* controls = page.controls();
    select_text(controls->modelBox(), QStringLiteral("Qwen3-14B"));
    select_text(controls->gpuBox(), QStringLiteral("GeForce RTX 4060 "));
    controls->context()->setValue(16384);
    Choice c;
    c.model = "qwen3-14b";
    on_gpu(c, "rtx-4060");
    c.context = 16384;
    LayerSplitRequest expected;
    expected.plan = request_for(c);
    set_preset_layer_bytes(expected, WeightType::Q4_K_M);
    expected.gpu_bandwidth_gb_s = gpu_preset("rtx-4060").bandwidth_gb_s;
    expected.cpu_bandwidth_gb_s = controls->cpuBandwidthGbS()->value();
    const LayerSplitPlan most = plan_layer_split(expected);
    QVERIFY(most.gpu_layers > 0 && most.gpu_layers < 40);
    QVERIFY(page.answers().split);
    QCOMPARE(page.answers().split->gpu_layers, most.gpu_layers);
    const FitsSummary* s = page.summary();
    QCOMPARE(s->verdictLabel()->text(),
             QStringLiteral("Fits with %1 of 40 layers on the GPU, the rest on the CPU")
                 .arg(most.gpu_layers));
    QVERIFY2(s->splitLabel()->text().contains(human(most.gpu.total())) &&
                 s->splitLabel()->text().contains(human(most.cpu.total())),
             qPrintable(s->splitLabel()->text()));
    const QLocale english(QLocale::English);
    QCOMPARE(s->rooflineLabel()->text(),
             QStringLiteral("%1 tokens/s").arg(english.toString(most.tokens_per_s, 'f', 1)));
    QCOMPARE(controls->gpuLayers()->value(), most.gpu_layers);  // the slider shows the answer
    QVERIFY(!controls->gpuLayers()->isEnabled());

    // Fewer layers by hand: less VRAM, more RAM, a slower roofline.
    controls->mostLayersThatFit()->setChecked(false);
    controls->gpuLayers()->setValue(10);
    expected.gpu_layers = 10;
    const LayerSplitPlan ten = plan_layer_split(expected);
    QCOMPARE(page.answers().split->gpu_layers, 10);
    QCOMPARE(page.answers().split->gpu.total(), ten.gpu.total());
    QVERIFY(ten.gpu.total() < most.gpu.total() && ten.cpu.total() > most.cpu.total());
    QVERIFY(s->verdictLabel()->text().startsWith(QStringLiteral("Fits with 10 of 40")));
    // All 40 by hand: the whole model, which does not fit.
    controls->gpuLayers()->setValue(40);
    QVERIFY(!page.answers().split);
    QVERIFY(s->verdictLabel()->text().startsWith(QStringLiteral("Does not fit,")));
    // The CPU backend holds every layer in RAM: no split to choose.
    controls->backendBox()->setCurrentIndex(
        controls->backendBox()->findData(int(PlanBackend::Cpu)));
    QVERIFY(!controls->gpuLayers()->isEnabled() && !controls->mostLayersThatFit()->isEnabled());
    QVERIFY(!page.answers().split);
  }

  // A model the engine split between GPU and CPU (ModelInfo::gpu_layers) is planned with its
  // layer count, not the most that fit; one loaded whole goes back to the most that fit.
  void aSplitLoadedModelIsPlannedWithItsLayerCount() {
    FitsPage page;
    FitsControls* controls = page.controls();
    ModelInfo info;
    info.path = QStringLiteral("/models/split.gguf");
    info.name = QStringLiteral("split");
    info.spec = model_preset("llama-2-7b").spec;
    info.weights = {3800000000, 3700000000, "the stored tensors of split.gguf (exact)"};
    info.cuda = true;
    info.gpu_layers = 12;
    page.setLoadedModel(info);
    QVERIFY(!controls->mostLayersThatFit()->isChecked());
    QCOMPARE(controls->gpuLayers()->value(), 12);
    QVERIFY(controls->gpuLayers()->isEnabled());
    QVERIFY(page.answers().split.has_value());
    QCOMPARE(page.answers().split->gpu_layers, std::int64_t{12});

    info.path = QStringLiteral("/models/whole.gguf");
    info.gpu_layers = 0;
    page.setLoadedModel(info);
    QVERIFY(controls->mostLayersThatFit()->isChecked());
  }

  // At 1280x800 the column of controls is 380 px: a loaded model's long name and its exact
  // weights are shortened with an ellipsis (they were cut off mid-letter: "92.1 MiE"), and
  // hovering says them whole.
  void aTextWiderThanItsListIsShortenedWithAnEllipsis() {
    FitsPage page;
    page.resize(1280, 700);
    ModelInfo info;
    info.path = QStringLiteral("/models/SmolLM2-135M-Instruct.Q4_1.gguf");
    info.name = QStringLiteral("SmolLM2-135M-Instruct.Q4_1.gguf");
    info.spec = model_preset("llama-2-7b").spec;
    info.weights = {96576768, 90000000, "the stored tensors (exact)"};
    page.setLoadedModel(info);
    page.show();
    QVERIFY(QTest::qWaitForWindowExposed(&page));
    for (QComboBox* box : {page.controls()->modelBox(), page.controls()->weightTypeBox()}) {
      auto* eliding = qobject_cast<ElidingComboBox*>(box);
      QVERIFY2(eliding != nullptr, qPrintable(box->currentText()));
      const QString shown = eliding->shownText();
      QVERIFY2(shown.endsWith(QChar(0x2026)) && box->currentText().startsWith(shown.chopped(1)),
               qPrintable(shown));
      QVERIFY(eliding->hoverText().startsWith(box->currentText()));
    }
    auto* preset = qobject_cast<ElidingComboBox*>(page.controls()->modelBox());
    preset->setCurrentIndex(preset->findText(QStringLiteral("Llama-2-7B")));
    QCOMPARE(preset->shownText(), QStringLiteral("Llama-2-7B"));  // short: as it is
  }

  // The layer count's tooltip names where else it is set: the GUI (kvscope) has no
  // --gpu-layers option; the Open model dialog and kvscope-cli do.
  void theLayerCountNamesWhereItIsSet() {
    FitsPage page;
    const QString tip = page.controls()->gpuLayers()->toolTip();
    QVERIFY2(tip.contains(QStringLiteral("kvscope-cli --gpu-layers")) &&
                 !tip.contains(QStringLiteral("kvscope --gpu-layers")) &&
                 tip.contains(QStringLiteral("Open model")),
             qPrintable(tip));
  }

  void theLoadedModelIsPlannedWithItsExactWeights() {
    FitsPage page;
    ModelInfo info;
    info.path = QStringLiteral("/models/tiny.gguf");
    info.name = QStringLiteral("tiny");
    info.spec = model_preset("llama-2-7b").spec;
    info.spec.context_length = 3000;
    info.weights = {123456789, 120000000, "the stored tensors of tiny.gguf (exact)"};
    info.k_dtype = KvDtype::Int8;
    info.v_dtype = KvDtype::F16;
    info.block_size = 32;
    info.cuda = false;
    page.setLoadedModel(info);
    FitsControls* controls = page.controls();
    QCOMPARE(controls->modelBox()->itemText(0), QStringLiteral("Loaded: tiny"));
    QCOMPARE(controls->modelBox()->currentIndex(), 0);
    QVERIFY(!controls->weightTypeBox()->isEnabled());
    QCOMPARE(controls->weightTypeBox()->currentText(),
             QStringLiteral("exact: the file's tensors, %1").arg(human(123456789)));
    QCOMPARE(controls->context()->value(), 3000);
    QCOMPARE(controls->backendBox()->currentData().toInt(), int(PlanBackend::Cpu));

    PlanRequest r = make_plan_request(info.spec, info.weights, KvDtype::Int8, KvDtype::F16, 32);
    r.backend = PlanBackend::Cpu;
    r.budget.total_bytes = gpu_preset("rtx-4090").memory_bytes;
    r.cuda = gpu_workspace_options(gpu_preset("rtx-4090"));
    expect_shown(page, r, gpu_preset("rtx-4090").bandwidth_gb_s);
    QVERIFY(page.formula()->toPlainText().contains("tiny.gguf (exact)"));

    // The same model again with other numbers: updated in place, still selected.
    const int entries = controls->modelBox()->count();
    info.weights.bytes = 2000000000;
    page.setLoadedModel(info);
    QCOMPARE(controls->modelBox()->count(), entries);
    QCOMPARE(controls->modelBox()->currentIndex(), 0);
    QCOMPARE(page.summary()->stackBar()->partBytes(FitsStackBar::Weights), 2000000000);
    // A preset chosen by the user stays chosen when the loaded entry is updated.
    select_text(controls->modelBox(), QStringLiteral("Llama-2-13B"));
    page.setLoadedModel(info);
    QCOMPARE(controls->modelBox()->currentText(), QStringLiteral("Llama-2-13B"));
    QVERIFY(controls->weightTypeBox()->isEnabled());
    QVERIFY(controls->weightTypeBox()->currentText().startsWith("q4_k_m"));
    QCOMPARE(controls->weightTypeBox()->count(), static_cast<int>(weight_types().size()));

    // Unloaded: the entry goes, the preset stays; a new model is selected when it comes.
    page.setLoadedModel(std::nullopt);
    QVERIFY(controls->modelBox()->findText("Loaded: tiny") < 0);
    QCOMPARE(controls->modelBox()->currentText(), QStringLiteral("Llama-2-13B"));
    info.path = QStringLiteral("/models/other.gguf");
    info.name = QStringLiteral("other");
    page.setLoadedModel(info);
    QCOMPARE(controls->modelBox()->currentText(), QStringLiteral("Loaded: other"));
    page.setLoadedModel(std::nullopt);
    QCOMPARE(controls->modelBox()->currentIndex(), 0);
    QVERIFY(controls->weightTypeBox()->isEnabled());
    QCOMPARE(page.summary()->stackBar()->partBytes(FitsStackBar::Weights),
             preset_weights(model_preset("llama-7b").spec, model_preset("llama-7b").n_params,
                            WeightType::Q4_K_M)
                 .bytes);
  }

  void theRealStoriesModelIsPlannedFromItsFile() {
    KVSCOPE_QT_REQUIRE_SHARED(path, "models/stories260K.gguf");
    const auto model = load_model(path.toStdString());
    ModelInfo info;
    info.path = path;
    info.name = QStringLiteral("stories260K");
    info.spec = model->spec();
    info.weights = model_weights(*model);
    info.block_size = 16;
    FitsPage page;
    page.setLoadedModel(info);
    PlanRequest r = make_plan_request(info.spec, info.weights, KvDtype::F16, KvDtype::F16);
    r.backend = PlanBackend::Cpu;
    r.budget.total_bytes = gpu_preset("rtx-4090").memory_bytes;
    r.cuda = gpu_workspace_options(gpu_preset("rtx-4090"));
    expect_shown(page, r, gpu_preset("rtx-4090").bandwidth_gb_s);
    // 8 heads sharing 4 KV heads: GQA is the model's own shape.
    expect_curve(page.kvChart()->variantSeries(1, 0), page.kvChart()->yUnitBytes(),
                 default_kv_config(info.spec, KvDtype::F16, KvDtype::F16), 1);
    expect_curve(page.kvChart()->ownSeries(), page.kvChart()->yUnitBytes(),
                 default_kv_config(info.spec, KvDtype::F16, KvDtype::F16), 1);
  }

  void oneUpdateTakesWellUnderAFrame() {
    FitsPage page;
    page.resize(1280, 800);
    page.show();
    QVERIFY(QTest::qWaitForWindowExposed(&page));
    page.controls()->batch()->setValue(4);
    // Context moves keep the chart's range; batch moves change it (the chart re-lays out).
    const auto time_moves = [](QSlider* slider, int range, const char* what) {
      std::vector<qint64> ns;
      QElapsedTimer timer;
      for (int i = 0; i < 200; ++i) {
        timer.start();
        slider->setValue(1 + (i * 4093) % range);
        ns.push_back(timer.nsecsElapsed());
      }
      std::sort(ns.begin(), ns.end());
      qInfo("FitsPage update over 200 %s slider moves: median %.3f ms, 90th %.3f ms, max %.3f ms",
            what, ns[100] / 1e6, ns[180] / 1e6, ns.back() / 1e6);
    };
    time_moves(page.controls()->context()->slider(), 4096, "context");
    QCOMPARE(page.controls()->context()->value(), 1 + (199 * 4093) % 4096);
    time_moves(page.controls()->batch()->slider(), 64, "batch");
    QCOMPARE(page.controls()->batch()->value(), 1 + (199 * 4093) % 64);
  }

  void screenshotsAt1280x800() {
    const QString dir = qEnvironmentVariable("KVSCOPE_SHOTS_DIR");
    if (dir.isEmpty()) QSKIP("set KVSCOPE_SHOTS_DIR to save screenshots");
    QDir().mkpath(dir);
    for (const bool dark : {false, true}) {
      QApplication::setPalette(dark ? dark_palette() : light_palette());
      // Framed as the app frames it: menus, a tool bar, tabs and a status bar.
      QMainWindow window;
      for (const char* menu : {"&File", "&Chat", "&View"}) window.menuBar()->addMenu(menu);
      window.addToolBar("Model")->addAction("Open model\u2026");
      auto* tabs = new QTabWidget(&window);
      tabs->addTab(new QWidget(tabs), QStringLiteral("Chat"));
      auto* page = new FitsPage(tabs);
      tabs->addTab(page, QStringLiteral("What fits"));
      tabs->setCurrentWidget(page);
      window.setCentralWidget(tabs);
      window.statusBar()->showMessage(QStringLiteral("Ready"));
      window.resize(1280, 800);
      window.show();
      QVERIFY(QTest::qWaitForWindowExposed(&window));
      page->controls()->batch()->setValue(8);
      QTest::qWait(50);
      const QString name = dark ? QStringLiteral("dark") : QStringLiteral("light");
      QVERIFY(window.grab().save(dir + QStringLiteral("/fits-%1.png").arg(name)));
      // A model larger than the GPU, answered with its layer split (#40).
      select_text(page->controls()->modelBox(), QStringLiteral("Qwen3-14B"));
      select_text(page->controls()->gpuBox(), QStringLiteral("GeForce RTX 4060 "));
      page->controls()->batch()->setValue(1);
      page->controls()->context()->setValue(16384);
      QTest::qWait(50);
      QVERIFY(window.grab().save(dir + QStringLiteral("/fits-%1-split.png").arg(name)));
      // A plan that does not fit, and a loaded model with a check result.
      page->controls()->batch()->setValue(24);
      ModelInfo info;
      info.path = QStringLiteral("/models/llama-2-7b.f16.gguf");
      info.name = QStringLiteral("llama-2-7b.f16");
      info.spec = model_preset("llama-2-7b").spec;
      info.weights =
          preset_weights(info.spec, model_preset("llama-2-7b").n_params, WeightType::F16);
      page->setLoadedModel(info);
      page->controls()->batch()->setValue(24);
      page->showPlanCheck(sample_check(true));
      QTest::qWait(50);
      QVERIFY(window.grab().save(dir + QStringLiteral("/fits-%1-short.png").arg(name)));
      // A real small model: every curve far below the budget.
      const QString stories = test::shared_file(QStringLiteral("models/stories260K.gguf"));
      if (stories.isEmpty()) continue;
      const auto model = load_model(stories.toStdString());
      info.path = stories;
      info.name = QStringLiteral("stories260K");
      info.spec = model->spec();
      info.weights = model_weights(*model);
      page->setLoadedModel(info);
      page->controls()->batch()->setValue(4);
      page->controls()->context()->setValue(300);
      QTest::qWait(50);
      QVERIFY(window.grab().save(dir + QStringLiteral("/fits-%1-stories.png").arg(name)));
    }
  }
};

}  // namespace kvscope::ui

QTEST_MAIN(kvscope::ui::FitsPageTest)
#include "fits_page_test.moc"
