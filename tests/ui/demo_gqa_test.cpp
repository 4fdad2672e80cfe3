// The GQA demo page: for a chosen model the table shows, per attention layout, the bytes
// the engine's kv_bytes_per_token_per_layer gives and the context the planner fits in the
// budget; the diagram joins every query head to the KV head it reads; a loaded model is
// offered first and picked.
#include <QApplication>
#include <QBarSet>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QRadioButton>
#include <QTableWidget>
#include <QtTest>

#include <cmath>

#include "demos/common/controls.h"
#include "demos/gqa/diagram.h"
#include "demos/gqa/gqa_page.h"
#include "kv/format/kv_format.h"
#include "plan/memory_model.h"
#include "plan/solvers.h"
#include "support/tiny_llama_spec.h"
#include "widgets/number_text.h"
#include "window/app_palette.h"

namespace kvscope::ui {
namespace {

enum Col { kLayout, kHeads, kGroup, kPerLayer, kPerToken, kRatio, kFull, kFits };

QString cell(const GqaDemoPage& page, int row, int col) {
  const QTableWidgetItem* item = page.table()->item(row, col);
  return item ? item->text() : QStringLiteral("<empty>");
}

// The stories260K shape: 5 layers, 8 query heads on 4 KV heads of head_dim 8.
ModelInfo small_model(KvDtype dtype) {
  ModelInfo info;
  info.name = QStringLiteral("stories260K.gguf");
  info.spec = test::tiny_llama_spec("", 512);
  ModelSpec& s = info.spec;
  s.n_layers = 5;
  s.dim = 64;
  s.n_heads = 8;
  s.n_kv_heads = 4;
  s.ffn_dim = 172;
  s.context_length = 512;
  info.k_dtype = info.v_dtype = dtype;
  return info;
}

// The longest context the planner fits in a KV budget, asked directly.
std::int64_t planner_context(const ModelSpec& spec, std::int64_t kv_heads, KvDtype dtype,
                             std::int64_t budget) {
  PlanRequest r = make_plan_request(spec, {}, dtype, dtype);
  r.kv.n_kv_heads = kv_heads;
  r.kv.max_context = std::int64_t{1} << 30;
  r.kv_budget_bytes = budget;
  return max_context(r).tokens;
}

}  // namespace

class DemoGqaTest : public QObject {
  Q_OBJECT

 private slots:
  // Llama-3-8B: 32 layers, 32 query heads on 8 KV heads of 128. In f16 a token takes
  // 2 x heads x 128 x 2 bytes per layer; 8 GiB holds 8 GiB / (32 x that) tokens (whole
  // blocks of 16 tokens, which these sizes fill exactly).
  void llama3RowsShowTheEnginesBytesAndThePlannersContext() {
    GqaDemoPage page;
    QVERIFY2(page.modelChooser()->selectPreset(QStringLiteral("llama-3-8b")),
             qPrintable(page.modelChooser()->catalogueError()));
    const std::int64_t heads[] = {32, 8, 1};
    const std::int64_t budget = std::int64_t{8} << 30;
    for (int row = 0; row < 3; ++row) {
      const auto per_layer =
          static_cast<std::int64_t>(kv_bytes_per_token_per_layer(KvDtype::F16, heads[row], 128));
      QCOMPARE(kv_bytes_per_token_per_layer(KvDtype::F16, heads[row], 128), 512.0 * heads[row]);
      QCOMPARE(cell(page, row, kHeads), QString::number(heads[row]));
      QCOMPARE(cell(page, row, kGroup), QString::number(32 / heads[row]));
      QCOMPARE(cell(page, row, kPerLayer), bytes_text(per_layer));
      QCOMPARE(cell(page, row, kPerToken), bytes_text(32 * per_layer));
      QCOMPARE(cell(page, row, kFull), bytes_text(8192 * 32 * per_layer));
      QCOMPARE(cell(page, row, kFits), count_text(budget / (32 * per_layer)));
    }
    QCOMPARE(cell(page, 0, kRatio), QStringLiteral("4\u00d7"));
    QCOMPARE(cell(page, 1, kRatio), QStringLiteral("1\u00d7"));
    QCOMPARE(cell(page, 2, kRatio), QStringLiteral("0.125\u00d7"));
    QVERIFY(cell(page, 1, kLayout).contains(QStringLiteral("this model")));
    QCOMPARE(page.bytesSet()->count(), 3);
    QCOMPARE(page.bytesSet()->at(0) / page.bytesSet()->at(1), 4.0);
  }

  void dtypeAndBudgetControlsChangeTheFigures() {
    GqaDemoPage page;
    QVERIFY(page.modelChooser()->selectPreset(QStringLiteral("llama-2-70b")));  // 64 on 8
    page.findChild<QComboBox*>(QStringLiteral("kvDtype"))->setCurrentText(QStringLiteral("int8"));
    page.findChild<QDoubleSpinBox*>(QStringLiteral("kvBudgetGiB"))->setValue(1.5);
    const ModelSpec& spec = page.modelChooser()->currentSpec();
    const std::int64_t heads[] = {64, 8, 1};
    for (int row = 0; row < 3; ++row) {
      QCOMPARE(
          cell(page, row, kPerLayer),
          bytes_text(std::llround(kv_bytes_per_token_per_layer(KvDtype::Int8, heads[row], 128))));
      QCOMPARE(cell(page, row, kFits), count_text(planner_context(spec, heads[row], KvDtype::Int8,
                                                                  3 * (std::int64_t{1} << 29))));
    }
    QVERIFY(page.table()->horizontalHeaderItem(kFits)->text().contains(QStringLiteral("1.50 GiB")));
  }

  void slidingWindowModelsFitAnyLength() {
    GqaDemoPage page;
    QVERIFY(page.modelChooser()->selectPreset(QStringLiteral("mistral-7b-v0.1")));
    QCOMPARE(cell(page, 1, kFits), QStringLiteral("any (window 4,096)"));
  }

  void diagramGroupsQueryHeadsOntoKvHeads_data() {
    QTest::addColumn<int>("heads");
    QTest::addColumn<int>("kv_heads");
    QTest::newRow("32/8") << 32 << 8;
    QTest::newRow("64/8") << 64 << 8;
    QTest::newRow("8/4") << 8 << 4;
    QTest::newRow("32/32 MHA") << 32 << 32;
    QTest::newRow("32/1 MQA") << 32 << 1;
  }

  void diagramGroupsQueryHeadsOntoKvHeads() {
    QFETCH(int, heads);
    QFETCH(int, kv_heads);
    GqaDiagram d;
    d.resize(900, 240);
    d.setHeads(heads, kv_heads);
    const int group = heads / kv_heads;
    for (int q = 0; q < heads; ++q) {
      QCOMPARE(d.kvHeadOf(q), q / group);
      QVERIFY(d.queryRect(q).width() >= 1);
      if (q > 0) QVERIFY(d.queryRect(q).left() > d.queryRect(q - 1).right());  // no overlap
    }
    for (int kv = 0; kv < kv_heads; ++kv) {
      // Each KV head sits under its group of query heads.
      const QRect box = d.kvRect(kv);
      QVERIFY(box.center().x() >= d.queryRect(kv * group).left());
      QVERIFY(box.center().x() <= d.queryRect((kv + 1) * group - 1).right());
      QVERIFY(box.top() > d.queryRect(0).bottom());
      if (kv > 0) {
        QVERIFY(box.left() > d.kvRect(kv - 1).right());
        QVERIFY(d.groupColor(kv) != d.groupColor(kv - 1));
      }
    }
    QVERIFY(!d.grab().isNull());
  }

  void layoutButtonsRedrawTheDiagram() {
    GqaDemoPage page;
    QVERIFY(page.modelChooser()->selectPreset(QStringLiteral("llama-2-70b")));
    QCOMPARE(page.diagram()->nKvHeads(), 8);  // the model's own layout is shown first
    page.findChild<QRadioButton*>(QStringLiteral("showMHA"))->click();
    QCOMPARE(page.diagram()->nHeads(), 64);
    QCOMPARE(page.diagram()->nKvHeads(), 64);
    page.findChild<QRadioButton*>(QStringLiteral("showMQA"))->click();
    QCOMPARE(page.diagram()->nKvHeads(), 1);
    // An MHA model offers a GQA split of 8 for comparison.
    QVERIFY(page.modelChooser()->selectPreset(QStringLiteral("llama-2-7b")));
    QCOMPARE(page.diagram()->nKvHeads(), 32);
    QCOMPARE(page.layoutKvHeads(GqaDemoPage::kGqa), 8);
    QVERIFY(cell(page, 0, kLayout).contains(QStringLiteral("this model")));
  }

  void loadedModelIsOfferedFirstWithItsDtype() {
    GqaDemoPage page;
    page.setLoadedModel(small_model(KvDtype::Int8));
    QCOMPARE(page.modelChooser()->currentIndex(), 0);
    QVERIFY(page.modelChooser()->currentText().contains(QStringLiteral("stories260K")));
    QCOMPARE(page.findChild<QComboBox*>(QStringLiteral("kvDtype"))->currentText(),
             QStringLiteral("int8"));
    QCOMPARE(page.diagram()->nHeads(), 8);
    QCOMPARE(page.diagram()->nKvHeads(), 4);
    QCOMPARE(cell(page, 1, kPerLayer),
             bytes_text(std::llround(kv_bytes_per_token_per_layer(KvDtype::Int8, 4, 8))));
    QCOMPARE(cell(page, 1, kPerToken),
             bytes_text(std::llround(5 * kv_bytes_per_token_per_layer(KvDtype::Int8, 4, 8))));
    const int presets = page.modelChooser()->count() - 1;
    page.setLoadedModel(std::nullopt);
    QCOMPARE(page.modelChooser()->count(), presets);
    QVERIFY(!page.modelChooser()->currentText().startsWith(QStringLiteral("Loaded")));
  }

  // KVSCOPE_SHOTS_DIR=dir: PNGs of the page at 1280x800 in both palettes (run under Xvfb).
  void screenshots() {
    const QString dir = qEnvironmentVariable("KVSCOPE_SHOTS_DIR");
    if (dir.isEmpty()) QSKIP("set KVSCOPE_SHOTS_DIR to save screenshots");
    for (const bool dark : {false, true}) {
      QApplication::setPalette(dark ? dark_palette() : light_palette());
      GqaDemoPage page;
      page.resize(1280, 800);
      page.show();
      QVERIFY(QTest::qWaitForWindowExposed(&page));
      QVERIFY(page.modelChooser()->selectPreset(dark ? QStringLiteral("llama-2-70b")
                                                     : QStringLiteral("llama-3-8b")));
      QTest::qWait(50);  // charts lay out their titles and axes on posted events
      QVERIFY(page.grab().save(dir + (dark ? "/demo-gqa-dark.png" : "/demo-gqa-light.png")));
    }
  }
};

}  // namespace kvscope::ui

QTEST_MAIN(kvscope::ui::DemoGqaTest)
#include "demo_gqa_test.moc"
