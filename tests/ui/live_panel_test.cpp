// The live panel: a snapshot from the real engine reaches every chart's series and the
// block map; the view model stacks memory parts and keeps one point per token count; the
// block map's tooltip names the block's owner, fill, refcount and bytes.
#include <QBarCategoryAxis>
#include <QBarSet>
#include <QCategoryAxis>
#include <QLineSeries>
#include <QSignalSpy>
#include <QValueAxis>
#include <QtTest>

#include <cmath>

#include "chat/session.h"
#include "panel/block_map_widget.h"
#include "panel/fragmentation_chart.h"
#include "panel/history.h"
#include "panel/layer_chart.h"
#include "panel/live_panel.h"
#include "panel/memory_chart.h"
#include "ui_test_support.h"
#include "widgets/layer_labels.h"
#include "worker/engine_worker.h"

namespace kvscope::ui {
namespace {

// A hand-made frame: one group of 4 blocks of 16 tokens; block 0 full and shared by
// sequences 1 and 2, block 1 holding 5 tokens of sequence 1, blocks 2-3 free.
PanelFrame small_frame(std::int64_t tokens_seq1, double seconds) {
  PanelFrame f;
  f.seconds = seconds;
  f.cache.block_size = 16;
  LayerGroupSnapshot g;
  g.layers = {0, 1};
  g.block_bytes = 4096;
  g.blocks = {{0, 1, 2, 16}, {1, 1, 1, 5}, {2, -1, 0, 0}, {3, -1, 0, 0}};
  summarize_group(g, 16);
  f.cache.groups.push_back(g);
  f.cache.sequences = {{1, tokens_seq1, false, 0}, {2, 16, false, 0}};
  summarize_totals(f.cache);
  f.cache.layers = {{0, 0, 4096, {}, {}}, {1, 0, 4096, {}, {}}};
  f.memory.total = 1000;
  f.memory.weights = 100;
  f.memory.kv_pool = 16384;
  f.memory.workspace = 10;
  f.memory.free = 500;
  f.owners = {{1, 7}, {2, 8}};
  return f;
}

}  // namespace

class LivePanelTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

  void aSnapshotFromTheEngineReachesEverySeries() {
    KVSCOPE_QT_REQUIRE_SHARED(model, "models/stories260K.gguf");
    EngineWorker worker(test::scratch_dir());
    worker.setFrameInterval(0);  // a frame after every step: the test does not race the clock
    LivePanel panel;
    panel.resize(640, 700);
    connect(&worker, &EngineWorker::frameReady, &panel, &LivePanel::setFrame);
    QSignalSpy finished(&worker, &EngineWorker::replyFinished);
    worker.loadModel({model, test::test_engine_options()});
    ChatSession session(1, QStringLiteral("t"));
    worker.submitChat(session.beginUserTurn(QStringLiteral("Once upon a time")));
    QVERIFY(finished.wait(60000));
    QTRY_VERIFY(panel.framesDrawn() >= 2);

    QVERIFY(panel.fragmentationChart()->pagedSeries()->count() >= 2);
    QCOMPARE(panel.fragmentationChart()->contiguousSeries()->count(),
             panel.fragmentationChart()->pagedSeries()->count());
    QVERIFY(panel.memoryChart()->upperSeries(kKvUsed)->count() >= 2);
    QCOMPARE(panel.layerChart()->bytesSet()->count(), 5);  // stories260K has 5 layers
    QCOMPARE(panel.layerChart()->kErrorSeries()->count(), 5);
    QVERIFY(panel.blockMap()->blockCount() > 0);
    // Some frame while generating had blocks in use: the memory curve rose above weights.
    double max_kv = 0;
    for (const QPointF& p : panel.memoryChart()->upperSeries(kKvUsed)->points()) {
      const double weights = panel.memoryChart()->upperSeries(kWeights)->at(0).y();
      max_kv = std::max(max_kv, p.y() - weights);
    }
    QVERIFY(max_kv > 0);
  }

  void historyStacksMemoryPartsAndKeepsOnePointPerTokenCount() {
    PanelHistory h;
    h.add(small_frame(21, 0.0));
    h.add(small_frame(21, 0.1));  // same token count: replaces the point
    h.add(small_frame(30, 0.2));
    QCOMPARE(h.pagedWaste().size(), 3);
    const QList<QPointF> weights = h.memoryStack(kWeights, 1.0);
    const QList<QPointF> kv = h.memoryStack(kKvUsed, 1.0);
    QCOMPARE(weights.size(), 2);
    QCOMPARE(weights[0], QPointF(37, 100));  // 21 + 16 tokens; weights 100 bytes
    QCOMPARE(kv[0].y(), 100.0 + 2 * 4096);   // + 2 used blocks of 4096 bytes
    // Paged waste: 2 used blocks = 32 slots, 16 + 5 filled -> 11 empty.
    QCOMPARE(h.pagedWaste()[0].y(), 100.0 * 11 / 32);
  }

  // A split's frame (hand-made): layer 0's group on the GPU, layer 1's on the CPU. Each side's
  // memory stack is its own MemoryInfo with its own groups' KV in use, each group is drawn
  // under its side's heading, and each layer's bar is in its side's set.
  void aSplitFrameDrawsEachSideApart() {
    PanelFrame f = small_frame(21, 0);
    LayerGroupSnapshot cpu = f.cache.groups[0];
    f.cache.groups[0].layers = {0};
    cpu.layers = {1};
    cpu.block_bytes = 2048;
    cpu.blocks = {{0, 1, 1, 16}, {1, -1, 0, 0}, {2, -1, 0, 0}, {3, -1, 0, 0}};
    summarize_group(cpu, 16);
    f.cache.groups.push_back(cpu);
    summarize_totals(f.cache);
    f.cache.layers = {{0, 0, 8192, {}, {}}, {1, 1, 2048, {}, {}}};
    SplitMemory split{1, 2, f.memory, {}};
    split.cpu.weights = 300;
    split.cpu.kv_pool = 8192;
    split.cpu.total = 100000;
    f.split = split;

    PanelHistory h;
    h.add(f);
    QCOMPARE(h.latestMemory(kDeviceMemory)[kKvUsed], std::uint64_t{2 * 4096});
    QCOMPARE(h.latestMemory(kDeviceMemory)[kKvFree], std::uint64_t{16384 - 2 * 4096});
    QCOMPARE(h.latestMemory(kSplitRam)[kWeights], std::uint64_t{300});
    QCOMPARE(h.latestMemory(kSplitRam)[kKvUsed], std::uint64_t{2048});
    QCOMPARE(h.latestMemory(kSplitRam)[kKvFree], std::uint64_t{8192 - 2048});
    QCOMPARE(h.total(kSplitRam), std::uint64_t{100000});

    LivePanel panel;
    panel.resize(640, 700);
    panel.setFrame(f);
    panel.drawNow();
    const auto& sections = panel.blockMap()->sections();
    QCOMPARE(sections.size(), std::size_t{2});
    QVERIFY2(sections[0].heading.startsWith("GPU \u00b7 layers 0"),
             qPrintable(sections[0].heading));
    QVERIFY2(sections[1].heading.startsWith("CPU \u00b7 layers 1"),
             qPrintable(sections[1].heading));
    QCOMPARE(sections[0].groups, std::vector<std::size_t>{0});
    QCOMPARE(sections[1].groups, std::vector<std::size_t>{1});
    QVERIFY(!panel.ramMemoryChart()->isHidden());
    QCOMPARE(panel.memoryChart()->title(), QStringLiteral("VRAM (GPU: layer 0)"));
    QCOMPARE(panel.ramMemoryChart()->title(),
             QStringLiteral("RAM (CPU: layer 1, token table, output head)"));
    QCOMPARE(panel.layerChart()->bytesSet()->at(0), 8.0);  // KiB
    QCOMPARE(panel.layerChart()->bytesSet()->at(1), 0.0);
    QCOMPARE(panel.layerChart()->cpuBytesSet()->at(1), 2.0);

    panel.reset();  // a model without a split: as before
    PanelFrame one = small_frame(21, 0);
    panel.setFrame(one);
    panel.drawNow();
    QVERIFY(panel.blockMap()->sections().empty());
    QVERIFY(panel.ramMemoryChart()->isHidden());
    QCOMPARE(panel.memoryChart()->title(), QStringLiteral("Memory as the context grows"));
  }

  // The per-layer bytes axis counts in the unit the busiest layer holds at least one of, with
  // round ticks: a 7B model's 32 MiB a layer reads 32 on a MiB axis, not "3.28e+04" KiB.
  void layerBytesAreInTheUnitTheirSizeCallsFor() {
    LivePanel panel;
    panel.resize(640, 700);
    struct Case {
      std::uint64_t bytes;
      QString unit;
      double value;
    };
    const Case cases[] = {{std::uint64_t{8} << 10, QStringLiteral("KiB"), 8.0},
                          {std::uint64_t{32} << 20, QStringLiteral("MiB"), 32.0},
                          {std::uint64_t{3} << 30, QStringLiteral("GiB"), 3.0}};
    for (const auto& [bytes, unit, value] : cases) {
      PanelFrame f = small_frame(21, 0);
      f.cache.layers[0].bytes_in_use = bytes;
      f.cache.layers[1].bytes_in_use = bytes / 2;
      panel.setFrame(f);
      panel.drawNow();
      LayerChart* chart = panel.layerChart();
      QCOMPARE(chart->bytesUnit(), unit);
      QCOMPARE(chart->bytesSet()->at(0), value);
      QCOMPARE(chart->bytesSet()->at(1), chart->bytesSet()->at(0) / 2);
      // the axis reaches past the busiest layer, and its ticks fall on round values
      const double top = chart->bytesAxis()->max();
      QVERIFY2(top >= chart->bytesSet()->at(0) && top <= 10 * chart->bytesSet()->at(0),
               qPrintable(QString::number(top)));
      const double step = top / (chart->bytesAxis()->tickCount() - 1);
      QVERIFY2(std::abs(step - std::round(step)) < 1e-9 || step < 1,
               qPrintable(QString::number(step)));
    }
  }

  // Layers in runs read as ranges (Gemma 3's sliding group, or 30 layers), not a cut-off list.
  void blockMapGroupHeaderWritesLayerRanges() {
    BlockMapWidget map;
    PanelFrame f = small_frame(21, 0);
    f.cache.groups[0].layers = {0, 1, 2, 3, 4, 6, 7, 8, 9, 10, 12, 13, 14, 15, 16};
    f.cache.groups[0].window = 512;
    LayerGroupSnapshot global = f.cache.groups[0];
    global.layers = {5, 11, 17};
    global.window = 0;
    f.cache.groups.push_back(global);
    map.setFrame(f);
    QVERIFY2(map.groupTitle(0).startsWith(QStringLiteral(
                 "Group 0 \u00b7 layers 0-4, 6-10, 12-16 \u00b7 sliding window 512")),
             qPrintable(map.groupTitle(0)));
    QVERIFY2(map.groupTitle(1).contains(QStringLiteral("layers 5, 11, 17 \u00b7 full attention")),
             qPrintable(map.groupTitle(1)));
  }

  // Both chats' blocks are drawn, so both are in the legend, a long name elided rather than
  // the next one dropped; with more owners than fit, "+N more".
  void blockMapLegendNamesEveryOwner() {
    BlockMapWidget map;
    map.resize(620, 200);
    map.setFrame(small_frame(21, 0));
    map.setChatNames({{7, QStringLiteral("Apache License Version 2.0, January 2004 and more")},
                      {8, QStringLiteral("Tell me a long story about the moon")}});
    const QStringList texts = map.legendTexts();
    QVERIFY2(texts.size() == 5, qPrintable(texts.join(" | ")));  // 2 chats, shared, partly, free
    QVERIFY2(texts[0].startsWith("Apache") && texts[1].startsWith("Tell"),
             qPrintable(texts.join(" | ")));
    QVERIFY2(texts.contains("free"), qPrintable(texts.join(" | ")));
    map.resize(300, 200);  // too narrow for two names beside the key
    map.setFrame(small_frame(21, 0));
    const QStringList narrow = map.legendTexts();
    QVERIFY2(narrow.join(" ").contains("more"), qPrintable(narrow.join(" | ")));
  }

  // A regenerated reply: two sequences of one chat, drawn in the chat's one colour, are one
  // entry naming both; a name too long for its share is shortened at its end (the legend read
  // "Tell me…ence 2) | Tell me…ence 3)" at 1280x800: one colour twice, its middle cut out).
  void blockMapLegendHasOneEntryPerChatShortenedAtItsEnd() {
    BlockMapWidget map;
    PanelFrame f = small_frame(21, 0);
    f.owners = {{1, 7}, {2, 8}, {3, 8}};
    f.cache.groups[0].blocks[2] = {2, 3, 1, 4};
    summarize_group(f.cache.groups[0], 16);
    summarize_totals(f.cache);
    map.resize(1200, 200);
    map.setFrame(f);
    const QString first = QStringLiteral("Explain what a KV cache is in two sentences.");
    const QString second = QStringLiteral("Tell me a long story about the moon and the stars");
    map.setChatNames({{7, first}, {8, second}});
    QStringList texts = map.legendTexts();
    QCOMPARE(texts.mid(0, 3),
             QStringList({first + QStringLiteral(" (sequence 1)"),
                          second + QStringLiteral(" (sequences 2, 3)"), QStringLiteral("shared")}));
    map.resize(640, 200);
    map.setFrame(f);
    texts = map.legendTexts();
    QVERIFY2(texts.size() > 2 && texts[2] == QStringLiteral("shared"),
             qPrintable(texts.join(" | ")));
    for (const auto& [shown, name] : {std::pair{texts[0], first}, std::pair{texts[1], second}}) {
      QVERIFY2(
          shown.endsWith(QChar(0x2026)) && shown.size() > 4 && name.startsWith(shown.chopped(1)),
          qPrintable(texts.join(" | ")));
    }
  }

  // 30 layers (SmolLM2): the bar axis prints nothing (it would print "..." under most bars),
  // the number axis 0, 5, ..., 25 under their bars; 18 layers (Gemma 3 270M): every number.
  void layerAxesPrintEveryFifthLayerWhenCrowded() {
    QBarCategoryAxis bars;
    QCategoryAxis numbers;
    set_layer_axes(&bars, &numbers, 30);
    QCOMPARE(bars.count(), 30);
    QVERIFY(!bars.labelsVisible());
    QCOMPARE(numbers.categoriesLabels(), QStringList({"0", "5", "10", "15", "20", "25"}));
    QCOMPARE(numbers.endValue(QStringLiteral("25")), 25.0);
    QCOMPARE(numbers.min(), -0.5);
    QCOMPARE(numbers.max(), 29.5);
    set_layer_axes(&bars, &numbers, 18);
    QCOMPARE(numbers.count(), 18);
  }

  void blockMapTooltipNamesOwnerFillRefcountAndBytes() {
    BlockMapWidget map;
    map.resize(400, 200);
    map.setFrame(small_frame(21, 0));
    map.setChatNames({{7, QStringLiteral("Fox story")}});
    // Find the cells by scanning: the first used cell is block 0 (shared).
    QString shared, partial, free_text;
    for (int y = 0; y < 200 && (shared.isEmpty() || partial.isEmpty()); ++y) {
      for (int x = 0; x < 400; ++x) {
        const QString t = map.describeAt({x, y});
        if (t.contains("block 0")) shared = t;
        if (t.contains("block 1\n")) partial = t;
        if (t.contains("block 3")) free_text = t;
      }
    }
    QVERIFY2(shared.contains("Fox story") && shared.contains("refcount: 2 (shared)") &&
                 shared.contains("16 / 16") && shared.contains("4.00 KiB"),
             qPrintable(shared));
    QVERIFY2(partial.contains("5 / 16") && partial.contains("refcount: 1"), qPrintable(partial));
    QVERIFY2(free_text.contains("free"), qPrintable(free_text));
  }
};

}  // namespace kvscope::ui

QTEST_MAIN(kvscope::ui::LivePanelTest)
#include "live_panel_test.moc"
