// The live panel and the model line of a model split between GPU and CPU, for real: the whole
// window runs stories260K (5 layers) with layers 0-1 on the CUDA backend, compiled for the
// CUDA emulation (kernels/emulation: every kernel executes on the CPU), and layers 2-4 on the
// CPU backend (run/split_backend.h). After a reply the block map has a GPU and a CPU heading
// with each side's groups under it, the memory chart a VRAM and a RAM part whose legends are
// the engine's own numbers (SplitMemory), the per-layer bars are coloured by side, and the
// model line says "2/5 layers on the GPU". The same model all on the (emulated) GPU shows
// none of this.
//
// KVSCOPE_SCREENSHOT_DIR=dir: the window after the split's reply is saved there as
// panel-split-light.png and panel-split-dark.png (1280 x 800; run under Xvfb or offscreen).
#include <QApplication>
#include <QBarSet>
#include <QLabel>
#include <QLineSeries>
#include <QSignalSpy>
#include <QTextDocumentFragment>
#include <QtTest>

#include <memory>
#include <set>

#include "backend/cuda_factory.h"
#include "chat/chat_controller.h"
#include "chat/session.h"
#include "panel/block_map_widget.h"
#include "panel/history.h"
#include "panel/layer_chart.h"
#include "panel/live_panel.h"
#include "panel/memory_chart.h"
#include "panel/split_sides.h"
#include "plan/units.h"
#include "ui_test_support.h"
#include "window/app_palette.h"
#include "window/app_style.h"
#include "window/main_window.h"
#include "worker/engine_controller.h"

namespace kvscope::ui {
namespace {

constexpr std::int64_t kGpuLayers = 2;  // of stories260K's 5

// The window's engine on the emulated CUDA backend: `gpu_layers` of the model on the GPU
// (kAllGpuLayers: every one, no split). A small pool keeps the block map readable.
EngineOptions cuda_options(std::int64_t gpu_layers) {
  EngineOptions o = test::test_engine_options();
  o.backend = BackendChoice::Cuda;
  o.gpu_layers = gpu_layers;
  o.context_length = 256;
  o.kv_budget_bytes = std::uint64_t{1} << 20;
  o.cuda_factory = cuda_backend_factory(CudaBackendOptions{});
  return o;
}

QString bytes(std::uint64_t n) {
  return QString::fromStdString(human_bytes(static_cast<std::int64_t>(n)));
}

// The memory chart's legend for one side as it must read: MemoryInfo's parts, with KV in use
// the side's own groups' used bytes from the same frame.
QStringList expected_legend(const MemoryInfo& m, std::uint64_t kv_used) {
  return {QStringLiteral("weights ") + bytes(m.weights),
          QStringLiteral("KV in use ") + bytes(kv_used),
          QStringLiteral("KV pool free ") + bytes(m.kv_pool - kv_used),
          QStringLiteral("workspace ") + bytes(m.workspace),
          QStringLiteral("others ") + bytes(m.used_by_others),
          QStringLiteral("free ") + bytes(m.free) + QStringLiteral(" (not drawn)")};
}

std::set<std::int64_t> layers_of(const std::vector<LayerGroupSnapshot>& groups,
                                 const std::vector<std::size_t>& indices) {
  std::set<std::int64_t> layers;
  for (const std::size_t g : indices)
    layers.insert(groups[g].layers.begin(), groups[g].layers.end());
  return layers;
}

}  // namespace

class SplitPanelTest : public QObject {
  Q_OBJECT

 private:
  std::unique_ptr<MainWindow> make_window() {
    AppConfig config;
    config.demo_folder = test::scratch_dir();
    config.cuda_factory = cuda_backend_factory(CudaBackendOptions{});
    config.cuda_available = true;
    auto w = std::make_unique<MainWindow>(config);
    w->resize(1280, 800);
    w->show();
    return w;
  }

  // Loads `path` through the window's engine with `options` (the load settings have no layer
  // count), as the window's own loads do; true once the window shows the model.
  static bool load(MainWindow& w, const QString& path, EngineOptions options) {
    QSignalSpy ready(&w, &MainWindow::modelReady);
    QSignalSpy error(&w, &MainWindow::modelError);
    auto* engine = w.findChild<EngineController*>();
    if (!engine) return false;
    engine->loadModel({path, std::move(options)});
    for (int i = 0; i < 1200 && ready.count() + error.count() == 0; ++i) QTest::qWait(100);
    if (error.count() > 0) qWarning("load failed: %s", qPrintable(w.noticeText()));
    return ready.count() > 0 && error.count() == 0;
  }

  // One reply of `tokens` tokens; returns once the panel has drawn the frame taken after it.
  static void reply(MainWindow& w, std::int64_t tokens) {
    SamplingSettings s = w.chats()->currentSession()->sampling();
    s.max_tokens = tokens;
    s.params.seed = 3;
    w.chats()->currentSession()->setSampling(s);
    QSignalSpy finished(w.chats(), &ChatController::replyFinished);
    w.chats()->sendMessage(QStringLiteral("Once upon a time"));
    QVERIFY(finished.wait(120000));
    QTest::qWait(200);  // the idle frame after the last step
    w.livePanel()->drawNow();
    QVERIFY(w.livePanel()->lastFrame().has_value());
  }

  static QString model_line(const MainWindow& w) {
    auto* label = w.findChild<QLabel*>(QStringLiteral("modelLabel"));
    return label ? QTextDocumentFragment::fromHtml(label->text()).toPlainText() : QString();
  }

  static void save_screenshots(MainWindow& w) {
    const QString dir = qEnvironmentVariable("KVSCOPE_SCREENSHOT_DIR");
    if (dir.isEmpty()) return;
    const QPalette before = QApplication::palette();
    for (const bool dark : {false, true}) {
      QApplication::setPalette(dark ? dark_palette() : light_palette());
      QTest::qWait(100);  // the charts restyle on the palette change
      w.livePanel()->drawNow();
      const QString path =
          dir + (dark ? QStringLiteral("/panel-split-dark.png") : "/panel-split-light.png");
      QVERIFY2(w.grab().save(path), qPrintable(path));
    }
    QApplication::setPalette(before);
  }

  // Every group is under exactly one heading: the GPU's hold layers [0, k), the CPU's the
  // rest, and each heading is drawn above its groups' headers.
  static void check_block_map(const LivePanel& panel, const PanelFrame& frame) {
    const BlockMapWidget& map = *panel.blockMap();
    const auto& sections = map.sections();
    QCOMPARE(sections.size(), std::size_t{2});
    QVERIFY2(sections[0].heading.startsWith(QStringLiteral("GPU \u00b7 layers 0-1")),
             qPrintable(sections[0].heading));
    QVERIFY2(sections[1].heading.startsWith(QStringLiteral("CPU \u00b7 layers 2-4")),
             qPrintable(sections[1].heading));
    const auto& groups = frame.cache.groups;
    QCOMPARE(layers_of(groups, sections[0].groups), (std::set<std::int64_t>{0, 1}));
    QCOMPARE(layers_of(groups, sections[1].groups), (std::set<std::int64_t>{2, 3, 4}));
    QCOMPARE(sections[0].groups.size() + sections[1].groups.size(), groups.size());
    for (const auto& s : sections) {
      for (const std::size_t g : s.groups) {
        QVERIFY(s.rect.bottom() < map.groupHeaderRect(g).top());
      }
    }
    for (const std::size_t g : sections[0].groups) {
      QVERIFY(map.groupHeaderRect(g).bottom() < sections[1].rect.top());
    }
  }

  // Each side's legend is its SplitMemory part; each stack's pool top is that side's weights
  // and KV pool; the engine's two accounts of the pools (the backends' MemoryInfo and the
  // snapshot's groups) agree, so the UI put the groups on the right side.
  static void check_memory(const LivePanel& panel, const PanelFrame& frame) {
    const SplitMemory& split = *frame.split;
    const MemoryChart* vram = panel.memoryChart();
    const MemoryChart* ram = panel.ramMemoryChart();
    QVERIFY(ram->isVisible());
    QCOMPARE(vram->title(), QStringLiteral("VRAM (GPU: layers 0-1)"));
    QCOMPARE(ram->title(), QStringLiteral("RAM (CPU: layers 2-4, token table, output head)"));
    for (const auto& [chart, side, m] : {std::tuple{vram, SplitSide::Gpu, split.gpu},
                                         std::tuple{ram, SplitSide::Cpu, split.cpu}}) {
      const auto used = static_cast<std::uint64_t>(side_used_bytes(frame.cache, side, kGpuLayers));
      QVERIFY2(used > 0, "each side's groups hold the reply's tokens");
      std::uint64_t pool = 0;
      for (const std::size_t g : side_groups(frame.cache.groups, side, kGpuLayers)) {
        const LayerGroupSnapshot& s = frame.cache.groups[g];
        pool += static_cast<std::uint64_t>(s.n_blocks * s.block_bytes);
      }
      QCOMPARE(m.kv_pool, pool);
      QCOMPARE(chart->legendTexts(), expected_legend(m, used));
      const QList<QPointF> pool_top = chart->upperSeries(kKvFree)->points();
      QVERIFY(pool_top.size() >= 2);
      for (const QPointF& p : pool_top) {
        QCOMPARE(p.y() * (1 << 20), static_cast<double>(m.weights + m.kv_pool));  // MiB
      }
    }
  }

  // Bars of layers [0, k) in the GPU's set, the others in the CPU's, in two colours.
  static void check_layers(const LivePanel& panel, const PanelFrame& frame) {
    const LayerChart& chart = *panel.layerChart();
    QCOMPARE(chart.bytesSet()->count(), 5);
    QCOMPARE(chart.cpuBytesSet()->count(), 5);
    for (int i = 0; i < 5; ++i) {
      const double kib = static_cast<double>(frame.cache.layers[i].bytes_in_use) / 1024.0;
      QVERIFY(kib > 0);
      QCOMPARE(chart.bytesSet()->at(i), i < kGpuLayers ? kib : 0.0);
      QCOMPARE(chart.cpuBytesSet()->at(i), i < kGpuLayers ? 0.0 : kib);
    }
    QVERIFY(chart.bytesSet()->color() != chart.cpuBytesSet()->color());
    QVERIFY2(chart.legendTexts().contains(QStringLiteral("KV bytes in use: GPU layers (left)")) &&
                 chart.legendTexts().contains(QStringLiteral("CPU layers")),
             qPrintable(chart.legendTexts().join(" | ")));
  }

 private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QSettings().clear();
    QApplication::setStyle(new AppStyle);  // as the app: Fusion, readable in the dark palette
  }

  void aSplitModelShowsEachSidesGroupsMemoryAndLayers() {
    KVSCOPE_QT_REQUIRE_SHARED(model, "models/stories260K.gguf");
    auto w = make_window();
    QVERIFY(load(*w, model, cuda_options(kGpuLayers)));
    QCOMPARE(w->chats()->model()->gpu_layers, kGpuLayers);
    QVERIFY(w->chats()->model()->cuda);  // What fits plans it on the GPU
    const QString line = model_line(*w);
    QVERIFY2(line.contains(QStringLiteral("\u00b7 2/5 layers on the GPU \u00b7")),
             qPrintable(line));
    QVERIFY2(line.contains(QStringLiteral(" + CPU (1 threads)")), qPrintable(line));

    reply(*w, 40);
    if (QTest::currentTestFailed()) return;
    const LivePanel& panel = *w->livePanel();
    const PanelFrame& frame = *panel.lastFrame();
    QVERIFY(frame.split.has_value());
    QCOMPARE(frame.split->gpu_layers, kGpuLayers);
    QCOMPARE(frame.split->n_layers, 5);
    check_block_map(panel, frame);
    if (QTest::currentTestFailed()) return;
    check_memory(panel, frame);
    if (QTest::currentTestFailed()) return;
    check_layers(panel, frame);
    if (QTest::currentTestFailed()) return;
    save_screenshots(*w);
  }

  // All 5 layers on the (emulated) GPU: one memory chart, no headings, one bar colour, and
  // the model line as before.
  void withoutASplitThePanelLooksAsBefore() {
    KVSCOPE_QT_REQUIRE_SHARED(model, "models/stories260K.gguf");
    auto w = make_window();
    QVERIFY(load(*w, model, cuda_options(EngineOptions::kAllGpuLayers)));
    QCOMPARE(w->chats()->model()->gpu_layers, 0);
    QVERIFY(w->chats()->model()->cuda);
    const QString line = model_line(*w);
    QVERIFY2(line.contains(QStringLiteral("\u00b7 5 layers \u00b7")), qPrintable(line));
    QVERIFY2(!line.contains(QStringLiteral("on the GPU")) && !line.contains(QStringLiteral(" + ")),
             qPrintable(line));

    reply(*w, 20);
    if (QTest::currentTestFailed()) return;
    const LivePanel& panel = *w->livePanel();
    const PanelFrame& frame = *panel.lastFrame();
    QVERIFY(!frame.split.has_value());
    QVERIFY(panel.blockMap()->sections().empty());
    QVERIFY(!panel.ramMemoryChart()->isVisible());
    QCOMPARE(panel.memoryChart()->title(), QStringLiteral("Memory as the context grows"));
    QCOMPARE(panel.memoryChart()->legendTexts(),
             expected_legend(frame.memory, static_cast<std::uint64_t>(frame.cache.used_bytes)));
    QVERIFY(panel.history().memoryStack(kKvUsed, 1.0, kSplitRam).isEmpty());
    for (int i = 0; i < 5; ++i) QCOMPARE(panel.layerChart()->cpuBytesSet()->at(i), 0.0);
    QCOMPARE(panel.layerChart()->legendTexts().front(), QStringLiteral("KV bytes in use (left)"));
  }
};

}  // namespace kvscope::ui

QTEST_MAIN(kvscope::ui::SplitPanelTest)
#include "split_panel_test.moc"
