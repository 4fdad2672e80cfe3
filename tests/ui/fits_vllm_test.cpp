// "Serve with vLLM" on the What fits page: the TP / PP boxes and the KV cache dtype plan the
// page's choices over a node with plan_parallel, built here as the CLI's `plan --tp --pp`
// builds it (independently of the section's own request code); each pipeline stage's bar
// shows that stage's plan, the command is vllm_serve_command's for the same arguments, a
// shape vLLM refuses shows the planner's message, and Copy puts the command on the
// clipboard. With KVSCOPE_SHOTS_DIR set one test saves the section at 1280x800.
#include <QApplication>
#include <QClipboard>
#include <QComboBox>
#include <QDir>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTabWidget>
#include <QtTest>

#include "fits/controls.h"
#include "fits/fits_page.h"
#include "fits/stack_bar.h"
#include "fits/vllm_section.h"
#include "fits_test_presets.h"
#include "plan/parallel_plan.h"
#include "plan/vllm_command.h"
#include "plan/vllm_memory.h"
#include "plan/vllm_swap.h"
#include "util/error.h"
#include "widgets/slider_spin.h"
#include "window/app_palette.h"

namespace kvscope::ui {
namespace {

using namespace fits_test;

// The CLI's node request (plan_node.cpp) for the page's single-GPU choice `c`.
ParallelRequest node_request_for(const Choice& c, std::int64_t tp, std::int64_t pp,
                                 ServingKvDtype dtype) {
  Choice served = c;
  served.weights = WeightType::F16;  // what vllm serve loads from the repository
  ParallelRequest r;
  r.base = request_for(served);
  r.n_params = model_preset(c.model).n_params;
  r.shape.tp = tp;
  r.shape.pp = pp;
  r.kv_dtype = dtype;
  return r;
}

// The CLI's --emit vllm arguments for `r`, with the swap space of vLLM's plan for the same
// server under the section's release and checkpoint format (none under V1).
VllmArgs args_for(const Choice& c, const ParallelRequest& r, const FitsVllmSection& s) {
  const ModelPreset& m = model_preset(c.model);
  VllmArgs v;
  v.model = m.hf_repo.empty() ? m.slug : m.hf_repo;
  v.tensor_parallel_size = r.shape.tp;
  v.pipeline_parallel_size = r.shape.pp;
  v.max_model_len = r.base.context;
  v.max_num_seqs = r.base.batch;
  v.gpu_memory_utilization = r.base.budget.utilisation;
  v.kv_cache_dtype = r.kv_dtype;
  v.block_size = r.base.kv.block_size;
  const VllmMemoryPlan vllm = plan_vllm_memory(vllm_memory_request(
      r, r.base.budget.total_bytes,
      static_cast<VllmVersion>(s.vllmVersionBox()->currentData().toInt()),
      static_cast<VllmWeightFormat>(s.vllmWeightsBox()->currentData().toInt())));
  v.swap_space_gib = plan_vllm_swap(vllm).swap_space_gib;
  return v;
}

// The section shows plan_parallel(r): one bar per stage with that stage's plan, the
// verdict, and the command.
void expect_node_shown(const FitsVllmSection& s, const Choice& c, const ParallelRequest& r) {
  const ParallelPlan plan = plan_parallel(r);
  QVERIFY(s.plan().has_value());
  QVERIFY(s.errorLabel()->isHidden());
  QCOMPARE(s.gpusLabel()->text(), QStringLiteral("GPUs in the node: %1").arg(r.shape.gpus()));
  QCOMPARE(s.stageBars().size(), plan.stages.size());
  for (std::size_t i = 0; i < plan.stages.size(); ++i) {
    const MemoryPlan& m = plan.stages[i].plan;
    const FitsStackBar* bar = s.stageBars()[i];
    QCOMPARE(bar->partBytes(FitsStackBar::Weights), m.weights.bytes);
    QCOMPARE(bar->partBytes(FitsStackBar::Kv), m.kv.pool_bytes_needed);
    QCOMPARE(bar->partBytes(FitsStackBar::Workspace), m.workspace.total());
    QCOMPARE(bar->shortBytes(), std::max<std::int64_t>(0, -m.margin_bytes));
    QCOMPARE(bar->usableBytes(), m.usable_bytes);
    QCOMPARE(bar->totalBytes(), r.base.budget.total_bytes);
  }
  std::int64_t short_bytes = 0;
  for (const StagePlan& stage : plan.stages) {
    short_bytes = std::max(short_bytes, -stage.plan.margin_bytes);
  }
  const QString shape = QStringLiteral("TP %1 x PP %2").arg(r.shape.tp).arg(r.shape.pp);
  const QString verdict = plan.fits
                              ? QStringLiteral("Fits on %1: ").arg(shape)
                              : QStringLiteral("Does not fit on %1, %2 short on the fullest GPU: ")
                                    .arg(shape, human(short_bytes));
  QVERIFY2(s.verdictLabel()->text().startsWith(verdict), qPrintable(s.verdictLabel()->text()));
  QVERIFY(s.verdictLabel()->text().contains(digits(plan.kv_tokens) + " tokens"));
  QCOMPARE(s.commandEdit()->toPlainText(),
           QString::fromStdString(vllm_serve_command(args_for(c, r, s))));
  QVERIFY(s.copyButton()->isEnabled());
}

Choice default_choice() {
  Choice c;
  on_gpu(c, "rtx-4090");
  c.context = 4096;
  return c;
}

}  // namespace

class FitsVllmTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

  void theDefaultIsOneGpuAndTheCommandIsVllmServeCommands() {
    FitsPage page;
    page.controls()->context()->setValue(4096);
    const Choice c = default_choice();
    FitsVllmSection* s = page.vllmSection();
    QCOMPARE(s->tpBox()->value(), 1);
    QCOMPARE(s->ppBox()->value(), 1);
    expect_node_shown(*s, c, node_request_for(c, 1, 1, ServingKvDtype::Auto));
    QVERIFY(s->commandEdit()->toPlainText().startsWith("vllm serve "));
    QVERIFY(s->commandEdit()->isReadOnly());
    // the latest release's V1 engine never swaps: no --swap-space, and the terms say why
    QVERIFY(!s->commandEdit()->toPlainText().contains("--swap-space"));
    QVERIFY(s->vllmTermsEdit()->toPlainText().contains("no --swap-space"));
  }

  void changingTpUpdatesEachGpusKvToPlanParallels() {
    FitsPage page;
    FitsControls* controls = page.controls();
    select_text(controls->modelBox(), QStringLiteral("Meta-Llama-3-70B"));
    select_text(controls->gpuBox(), QStringLiteral("H100 80GB"));
    controls->batch()->setValue(16);
    controls->context()->setValue(8192);
    Choice c;
    c.model = "llama-3-70b";
    on_gpu(c, "h100-sxm");
    c.batch = 16;
    c.context = 8192;
    FitsVllmSection* s = page.vllmSection();
    std::int64_t previous_kv = -1;
    for (const int tp : {1, 2, 4, 8}) {
      s->tpBox()->setValue(tp);
      const ParallelRequest r = node_request_for(c, tp, 1, ServingKvDtype::Auto);
      expect_node_shown(*s, c, r);
      const std::int64_t kv = s->stageBars()[0]->partBytes(FitsStackBar::Kv);
      QVERIFY(kv != previous_kv);
      previous_kv = kv;
    }
    // Both verdicts were shown: one GPU is short, eight fit.
    QVERIFY(plan_parallel(node_request_for(c, 8, 1, ServingKvDtype::Auto)).fits);
    QVERIFY(!plan_parallel(node_request_for(c, 1, 1, ServingKvDtype::Auto)).fits);
  }

  void ppGivesOneBarPerStageAndFp8ReachesThePlan() {
    FitsPage page;
    FitsControls* controls = page.controls();
    select_text(controls->modelBox(), QStringLiteral("Meta-Llama-3-70B"));
    select_text(controls->gpuBox(), QStringLiteral("H100 80GB"));
    controls->batch()->setValue(4);
    controls->context()->setValue(4096);
    Choice c;
    c.model = "llama-3-70b";
    on_gpu(c, "h100-sxm");
    c.batch = 4;
    c.context = 4096;
    FitsVllmSection* s = page.vllmSection();
    s->tpBox()->setValue(2);
    s->ppBox()->setValue(3);
    expect_node_shown(*s, c, node_request_for(c, 2, 3, ServingKvDtype::Auto));
    QCOMPARE(s->stageBars().size(), std::size_t{3});
    s->kvDtypeBox()->setCurrentIndex(s->kvDtypeBox()->findText(QStringLiteral("fp8")));
    expect_node_shown(*s, c, node_request_for(c, 2, 3, ServingKvDtype::Fp8));
    QVERIFY(s->commandEdit()->toPlainText().contains("--kv-cache-dtype fp8"));
  }

  void tpTimesPpStaysWithinTheNode() {
    FitsPage page;
    FitsVllmSection* s = page.vllmSection();
    s->tpBox()->setValue(4);
    QCOMPARE(s->ppBox()->maximum(), 2);
    s->ppBox()->setValue(2);
    QCOMPARE(s->tpBox()->maximum(), 4);
    s->ppBox()->setValue(8);  // clamped
    QCOMPARE(s->ppBox()->value(), 2);
    QCOMPARE(s->gpusLabel()->text(), QStringLiteral("GPUs in the node: 8"));
  }

  void aTpThatDoesNotDivideTheHeadsShowsThePlannersError() {
    FitsPage page;
    page.controls()->context()->setValue(4096);
    const Choice c = default_choice();
    FitsVllmSection* s = page.vllmSection();
    s->tpBox()->setValue(3);  // Llama-2-7B: 32 heads
    QString expected;
    try {
      plan_parallel(node_request_for(c, 3, 1, ServingKvDtype::Auto));
      QFAIL("plan_parallel accepted tp 3 for 32 heads");
    } catch (const UsageError& e) {
      expected = QString::fromStdString(e.what());
    }
    QVERIFY(!s->plan().has_value());
    QVERIFY(!s->errorLabel()->isHidden());
    QCOMPARE(s->errorLabel()->text(), expected);
    QVERIFY(s->verdictLabel()->isHidden());
    QVERIFY(s->stageBars().empty());
    QVERIFY(s->commandEdit()->toPlainText().isEmpty());
    QVERIFY(!s->copyButton()->isEnabled());
    // Back to a shape that divides: bars again.
    s->tpBox()->setValue(4);
    expect_node_shown(*s, c, node_request_for(c, 4, 1, ServingKvDtype::Auto));
  }

  // An error's red follows View > Dark theme (it kept the red of the theme it was shown in).
  void anErrorsRedFollowsTheTheme() {
    const QPalette before = QApplication::palette();
    FitsPage page;  // the section inside the page, as in the app (a window is told apart)
    FitsVllmSection* s = page.vllmSection();
    s->tpBox()->setValue(3);  // Llama-2-7B's 32 heads do not divide: an error
    QVERIFY(!s->errorLabel()->isHidden());
    QVERIFY(s->errorLabel()->styleSheet().contains(error_text_color(before).name()));
    const QPalette other = is_dark(before) ? light_palette() : dark_palette();
    // the palette reaches the widgets through posted events: QTRY_ lets them arrive
    QApplication::setPalette(other);
    QTRY_VERIFY2(s->errorLabel()->styleSheet().contains(error_text_color(other).name()),
                 qPrintable(s->errorLabel()->styleSheet()));
    QApplication::setPalette(before);
    QTRY_VERIFY(s->errorLabel()->styleSheet().contains(error_text_color(before).name()));
  }

  void theLoadedModelHasNoParameterCountToSplit() {
    FitsPage page;
    ModelInfo info;
    info.path = QStringLiteral("/models/llama-2-7b.f16.gguf");
    info.name = QStringLiteral("llama-2-7b.f16");
    info.spec = model_preset("llama-2-7b").spec;
    info.weights = preset_weights(info.spec, model_preset("llama-2-7b").n_params, WeightType::F16);
    page.setLoadedModel(info);
    FitsVllmSection* s = page.vllmSection();
    QVERIFY(!s->plan().has_value());
    QVERIFY(!s->errorLabel()->isHidden());
    QVERIFY(s->stageBars().empty());
  }

  void copyPutsTheCommandOnTheClipboard() {
    FitsPage page;
    FitsVllmSection* s = page.vllmSection();
    s->tpBox()->setValue(2);
    QGuiApplication::clipboard()->clear();
    QTest::mouseClick(s->copyButton(), Qt::LeftButton);
    QVERIFY(!s->commandEdit()->toPlainText().isEmpty());
    QCOMPARE(QGuiApplication::clipboard()->text(), s->commandEdit()->toPlainText());
  }

  // vLLM's own answer above the bars: Llama-3.1-8B on an RTX 3090 at 0.90, 20,000 tokens,
  // 256 sequences, as vLLM 0.6.4 logged it (vllm issue 10517: 1,952 blocks, 1.56x).
  void showsVllmsOwnKvTokensForTheRelease() {
    FitsPage page;
    FitsControls* controls = page.controls();
    select_text(controls->modelBox(), QStringLiteral("Llama-3.1-8B"));
    select_text(controls->gpuBox(), QStringLiteral("GeForce RTX 3090"));
    controls->batch()->setValue(256);
    controls->context()->setValue(20000);
    FitsVllmSection* s = page.vllmSection();
    s->vllmVersionBox()->setCurrentIndex(
        s->vllmVersionBox()->findData(static_cast<int>(VllmVersion::V0_6_4)));
    QVERIFY(s->vllmPlan().has_value());
    QCOMPARE(s->vllmPlan()->gpu_blocks, std::int64_t{1952});
    const QString verdict = s->vllmVerdictLabel()->text();
    QVERIFY2(verdict.contains("31,232 tokens") && verdict.contains("1.56x"), qPrintable(verdict));
    QVERIFY2(verdict.contains("Largest max_model_len that starts"), qPrintable(verdict));
    QVERIFY(s->vllmTermsEdit()->toPlainText().contains("activation"));
    // 0.6.4 swaps requests of several sequences only; a served request is one (n = 1), which
    // it recomputes: vLLM's default swap space, and the terms say what the 255 sequences its
    // pool of 1,952 blocks cannot hold would need if they were of requests with n > 1
    const QString command = s->commandEdit()->toPlainText();
    QVERIFY2(!command.contains("--swap-space"), qPrintable(command));
    const QString terms = s->vllmTermsEdit()->toPlainText();
    QVERIFY2(terms.contains("up to 255 such sequences of 20,000 tokens"), qPrintable(terms));
    // a checkpoint format changes the weights term
    select_text(s->vllmWeightsBox(), QStringLiteral("awq"));
    QVERIFY(s->vllmPlan()->gpu_blocks > 1952);
  }

  void screenshotAt1280x800() {
    const QString dir = qEnvironmentVariable("KVSCOPE_SHOTS_DIR");
    if (dir.isEmpty()) QSKIP("set KVSCOPE_SHOTS_DIR to save screenshots");
    QDir().mkpath(dir);
    for (const bool dark : {false, true}) {
      QApplication::setPalette(dark ? dark_palette() : light_palette());
      FitsPage page;
      page.resize(1280, 760);
      page.show();
      QVERIFY(QTest::qWaitForWindowExposed(&page));
      select_text(page.controls()->modelBox(), QStringLiteral("Meta-Llama-3-70B"));
      select_text(page.controls()->gpuBox(), QStringLiteral("H100 80GB"));
      page.controls()->batch()->setValue(16);
      page.controls()->context()->setValue(8192);
      page.tabs()->setCurrentWidget(page.vllmSection());
      page.vllmSection()->tpBox()->setValue(2);
      page.vllmSection()->ppBox()->setValue(2);
      QTest::qWait(50);
      const QString name = dark ? QStringLiteral("dark") : QStringLiteral("light");
      QVERIFY(page.grab().save(dir + QStringLiteral("/fits-vllm-%1.png").arg(name)));
      page.vllmSection()->ppBox()->setValue(1);
      page.vllmSection()->tpBox()->setValue(1);
      QTest::qWait(50);
      QVERIFY(page.grab().save(dir + QStringLiteral("/fits-vllm-%1-short.png").arg(name)));
      select_text(page.controls()->modelBox(), QStringLiteral("Llama-3.1-8B"));
      select_text(page.controls()->gpuBox(), QStringLiteral("GeForce RTX 3090"));
      page.controls()->batch()->setValue(256);
      page.controls()->context()->setValue(20000);
      QTest::qWait(50);
      QVERIFY(page.grab().save(dir + QStringLiteral("/fits-vllm-%1-3090.png").arg(name)));
    }
  }
};

}  // namespace kvscope::ui

QTEST_MAIN(kvscope::ui::FitsVllmTest)
#include "fits_vllm_test.moc"
