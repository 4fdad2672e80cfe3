// The KV quantization demo page: the synthetic errors it shows are the engine's own
// kv_quantize / kv_dequantize round trips, the sizes and capacities the engine's bytes
// function and planner, and a panel frame's measured per-layer error reaches its bars.
#include <QApplication>
#include <QBarSet>
#include <QDoubleSpinBox>
#include <QLineSeries>
#include <QScatterSeries>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTableWidget>
#include <QtTest>

#include <algorithm>
#include <cmath>

#include "chat/session.h"
#include "demos/common/controls.h"
#include "demos/common/table.h"
#include "demos/quant/channel_chart.h"
#include "demos/quant/layer_chart.h"
#include "demos/quant/quant_page.h"
#include "kv/format/kv_rotation.h"
#include "kv/kv_cache_manager.h"
#include "kv/kv_cache_observer.h"
#include "ui_test_support.h"
#include "widgets/number_text.h"
#include "window/app_palette.h"
#include "worker/engine_worker.h"

namespace kvscope::ui {
namespace {

constexpr KvDtype kDtypes[] = {KvDtype::F16, KvDtype::Int8, KvDtype::Int4};

QString cell(const KvQuantDemoPage& page, int row, int col) {
  const QTableWidgetItem* item = page.table()->item(row, col);
  return item ? item->text() : QStringLiteral("<empty>");
}

// Per channel and in total, sum (x - stored x)^2 and sum x^2, straight from the engine's
// formats: kv_quantize / kv_dequantize, or for int4 keys kv_k4_* with the first key of
// every block of 16 setting the offsets; int4 vectors stored in the Hadamard basis and
// turned back (kv_rotation.h), as the decoder stores them.
struct Errors {
  std::vector<double> sq_error, sq_exact;  // [head_dim]
  double total_error = 0, total_exact = 0;
  double relative(std::size_t c) const { return std::sqrt(sq_error[c] / sq_exact[c]); }
  double relative() const { return std::sqrt(total_error / total_exact); }
};

Errors round_trip(KvSide side, KvDtype dtype, const SyntheticKv& kv) {
  Errors e;
  const auto dim = static_cast<std::size_t>(kv.head_dim);
  e.sq_error.assign(dim, 0.0);
  e.sq_exact.assign(dim, 0.0);
  std::vector<std::uint8_t> data(
      static_cast<std::size_t>(kv_data_bytes_per_vector(dtype, kv.head_dim)));
  std::vector<std::uint16_t> scales(
      static_cast<std::size_t>(kv_scales_per_vector(side, dtype, kv.head_dim)) + 1);
  std::vector<std::uint16_t> offsets(dim);
  std::vector<float> back(dim), turned(dim);
  for (std::int64_t v = 0; v < kv.n_vectors; ++v) {
    const float* x = kv.values.data() + v * kv.head_dim;
    const float* in = x;
    if (kv_rotated(side, dtype)) {
      std::copy(x, x + kv.head_dim, turned.begin());
      kv_rotate_rows(turned.data(), 1, kv.head_dim);
      in = turned.data();
    }
    if (side == KvSide::K && dtype == KvDtype::Int4) {
      if (v % 16 == 0) kv_k4_set_offsets(in, kv.head_dim, offsets.data());
      kv_k4_quantize(in, offsets.data(), kv.head_dim, data.data(), scales.data());
      kv_k4_dequantize(data.data(), scales.data(), offsets.data(), kv.head_dim, back.data());
    } else {
      kv_quantize(dtype, in, kv.head_dim, data.data(), scales.data());
      kv_dequantize(dtype, data.data(), scales.data(), kv.head_dim, back.data());
    }
    if (kv_rotated(side, dtype)) kv_rotate_rows(back.data(), 1, kv.head_dim);
    for (std::size_t c = 0; c < dim; ++c) {
      const double d = static_cast<double>(x[c]) - back[c];
      e.sq_error[c] += d * d;
      e.sq_exact[c] += static_cast<double>(x[c]) * x[c];
    }
  }
  for (std::size_t c = 0; c < dim; ++c) {
    e.total_error += e.sq_error[c];
    e.total_exact += e.sq_exact[c];
  }
  return e;
}

void set_spin(QWidget& page, const char* name, int value) {
  page.findChild<QSpinBox*>(QLatin1String(name))->setValue(value);
}

// A frame from a real manager: 3 layers in int8 (K) / int4 (V), 20 tokens written with
// error measurement, like the CPU decoder writes them.
PanelFrame measured_frame() {
  KvCacheConfig c;
  LayerGroupConfig g;
  g.layers = {0, 1, 2};
  g.k_dtype = KvDtype::Int8;
  g.v_dtype = KvDtype::Int4;
  c.groups = {g};
  c.n_kv_heads = 2;
  c.head_dim = 32;
  c.max_context = 64;
  c.n_blocks = 8;
  KvCacheManager m(c);
  KvCacheObserver observer(m.config());
  m.set_observer(&observer);
  m.add_sequence(1);
  m.grow(1, 20);
  SyntheticKvSpec spec;
  spec.n_vectors = 2;
  spec.head_dim = 32;
  for (std::int64_t layer = 0; layer < 3; ++layer) {
    for (std::int64_t pos = 0; pos < 20; ++pos) {
      spec.seed = static_cast<std::uint64_t>(100 * layer + pos + 1);
      spec.outlier_scale = 1.0f + 10.0f * static_cast<float>(layer);  // more error deeper
      const SyntheticKv k = make_synthetic_kv(spec);
      m.bytes().write_token(1, layer, pos, k.values.data(), k.values.data(), true);
    }
  }
  PanelFrame f;
  f.cache = observer.snapshot(m);
  return f;
}

}  // namespace

class DemoQuantTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

  void syntheticErrorsAreTheEnginesRoundTrips() {
    KvQuantDemoPage page;
    set_spin(page, "headDim", 72);  // groups 32 + 32 + 8
    set_spin(page, "vectors", 300);
    set_spin(page, "outlierChannels", 3);
    set_spin(page, "seed", 7);
    page.findChild<QDoubleSpinBox*>(QStringLiteral("outlierScale"))->setValue(25.0);
    const SyntheticKvSpec spec = page.syntheticSpec();
    QCOMPARE(spec.head_dim, 72);
    QCOMPARE(spec.n_outlier_channels, 3);
    QCOMPARE(spec.outlier_scale, 25.0f);
    const SyntheticKv kv = make_synthetic_kv(spec);
    for (int row = 0; row < 3; ++row) {
      const Errors k = round_trip(KvSide::K, kDtypes[row], kv);
      const Errors v = round_trip(KvSide::V, kDtypes[row], kv);
      QCOMPARE(cell(page, row, KvQuantDemoPage::kKError), percent_text(k.relative()));
      QCOMPARE(cell(page, row, KvQuantDemoPage::kVError), percent_text(v.relative()));
      QCOMPARE(cell(page, row, KvQuantDemoPage::kBytesPerHead),
               bytes_text(std::llround(kv_bytes_per_token_per_layer(kDtypes[row], 1, 72))));
    }
    // The chart's lines: f16, int8, int4 values, int4 keys.
    const Errors lines[] = {
        round_trip(KvSide::V, KvDtype::F16, kv), round_trip(KvSide::V, KvDtype::Int8, kv),
        round_trip(KvSide::V, KvDtype::Int4, kv), round_trip(KvSide::K, KvDtype::Int4, kv)};
    for (int line = 0; line < QuantChannelChart::kSeries; ++line) {
      QLineSeries* s = page.channelChart()->errorSeries(line);
      QCOMPARE(s->count(), 72);
      for (int c = 0; c < 72; ++c) {
        const double expected = std::max(QuantChannelChart::kFloorPercent,
                                         100.0 * lines[line].relative(static_cast<std::size_t>(c)));
        QVERIFY2(std::abs(s->at(c).y() - expected) <= 1e-9 * expected,
                 qPrintable(QStringLiteral("line %1 channel %2: %3 vs %4")
                                .arg(line)
                                .arg(c)
                                .arg(s->at(c).y())
                                .arg(expected)));
      }
    }
    QCOMPARE(page.channelChart()->outlierSeries()->count(), 3);
    QCOMPARE(page.channelChart()->outlierSeries()->at(0).x(), 12.0);  // (2*0+1)*72/6
  }

  // Channel 1 shares quantization group 0 with the outlier channel 16 (of 4 in 128): its
  // int8 grid is set by the outlier, so its error is several times the clean data's. Int4
  // turns the vectors first (kv_rotation.h): the outliers' range is shared by every
  // channel, so channel 1 loses about what channel 40 (another group) loses.
  void anOutlierCoarsensTheChannelsOfItsGroup() {
    KvQuantDemoPage page;
    set_spin(page, "outlierChannels", 0);
    const double clean8 = page.roundTrip(KvSide::V, 1).per_channel[1].relative_rms_error();
    set_spin(page, "outlierChannels", 4);
    QCOMPARE(page.channelChart()->outlierSeries()->at(0).x(), 16.0);
    QVERIFY(page.roundTrip(KvSide::V, 1).per_channel[1].relative_rms_error() > 3.0 * clean8);
    const auto& int4 = page.roundTrip(KvSide::V, 2).per_channel;
    const double ratio = int4[1].relative_rms_error() / int4[40].relative_rms_error();
    QVERIFY2(ratio > 0.67 && ratio < 1.5, qPrintable(QString::number(ratio)));
  }

  // Llama-3-8B (32 layers, 8 KV heads of 128): the engine's bytes per token per layer
  // for each dtype, x32 over the layers, and the allocator's sizing of an 8 GiB pool in
  // blocks of 16 tokens: floor(budget / block bytes) x 16 tokens.
  void capacityColumnsAreTheEnginesBytesAndBlocks() {
    KvQuantDemoPage page;
    QVERIFY2(page.modelChooser()->selectPreset(QStringLiteral("llama-3-8b")),
             qPrintable(page.modelChooser()->catalogueError()));
    const std::int64_t budget = std::int64_t{8} << 30;
    for (int row = 0; row < 3; ++row) {
      const double per_layer = kv_bytes_per_token_per_layer(kDtypes[row], 8, 128);
      const std::int64_t block_set =
          32 * kv_bytes_per_block_per_layer(kDtypes[row], kDtypes[row], 8, 128, 16);
      QCOMPARE(cell(page, row, KvQuantDemoPage::kPerLayer), bytes_text(std::llround(per_layer)));
      QCOMPARE(cell(page, row, KvQuantDemoPage::kPerToken),
               bytes_text(std::llround(32 * per_layer)));
      QCOMPARE(cell(page, row, KvQuantDemoPage::kFits), count_text(budget / block_set * 16));
    }
    QCOMPARE(cell(page, 1, KvQuantDemoPage::kFits), QStringLiteral("123,360"));
    page.findChild<QDoubleSpinBox*>(QStringLiteral("kvBudgetGiB"))->setValue(1.0);
    QCOMPARE(cell(page, 0, KvQuantDemoPage::kFits), QStringLiteral("8,192"));
  }

  void aPanelFramesMeasuredErrorReachesTheBars() {
    KvQuantDemoPage page;
    QVERIFY(!page.layerChart()->hasMeasurements());
    const PanelFrame frame = measured_frame();
    page.setPanelFrame(frame);
    QVERIFY(page.layerChart()->hasMeasurements());
    QCOMPARE(page.layerChart()->kSet()->count(), 3);
    QuantErrorSums k, v;
    for (int l = 0; l < 3; ++l) {
      const LayerKvSnapshot& s = frame.cache.layers[static_cast<std::size_t>(l)];
      QVERIFY(s.k.count > 0);
      QCOMPARE(page.layerChart()->kSet()->at(l), 100.0 * s.k.relative_rms_error());
      QCOMPARE(page.layerChart()->vSet()->at(l), 100.0 * s.v.relative_rms_error());
      k += s.k;
      v += s.v;
    }
    QVERIFY(page.layerChart()->vSet()->at(2) > page.layerChart()->kSet()->at(2));  // int4 > int8
    QCOMPARE(cell(page, 1, KvQuantDemoPage::kMeasured),
             QStringLiteral("K %1").arg(percent_text(k.relative_rms_error())));
    QCOMPARE(cell(page, 2, KvQuantDemoPage::kMeasured),
             QStringLiteral("V %1").arg(percent_text(v.relative_rms_error())));
    QCOMPARE(cell(page, 0, KvQuantDemoPage::kMeasured), QString());
    // Unloading (or switching) the model makes the measurements stale: they go.
    page.setLoadedModel(std::nullopt);
    QVERIFY(!page.layerChart()->hasMeasurements());
    QCOMPARE(page.layerChart()->kSet()->count(), 0);
    QCOMPARE(cell(page, 1, KvQuantDemoPage::kMeasured), QString());
  }

  void theRealModelsMeasuredErrorReachesThePage() {
    KVSCOPE_QT_REQUIRE_SHARED(model, "models/stories260K.gguf");
    EngineWorker worker(test::scratch_dir());
    worker.setFrameInterval(0);
    KvQuantDemoPage page;
    connect(&worker, &EngineWorker::modelLoaded, &page,
            [&page](const ModelInfo& info) { page.setLoadedModel(info); });
    connect(&worker, &EngineWorker::frameReady, &page, &KvQuantDemoPage::setPanelFrame);
    QSignalSpy finished(&worker, &EngineWorker::replyFinished);
    EngineOptions options = test::test_engine_options();
    options.k_dtype = KvDtype::Int8;
    options.v_dtype = KvDtype::Int8;
    worker.loadModel({model, options});
    ChatSession session(1, QStringLiteral("t"));
    worker.submitChat(session.beginUserTurn(QStringLiteral("Once upon a time")));
    QVERIFY(finished.wait(60000));
    QTRY_VERIFY(page.layerChart()->hasMeasurements());
    QVERIFY(page.modelChooser()->hasLoadedModel());
    QCOMPARE(page.layerChart()->kSet()->count(), 5);  // stories260K has 5 layers
    for (int l = 0; l < 5; ++l) {
      QVERIFY(page.layerChart()->kSet()->at(l) > 0.0);
      QVERIFY(page.layerChart()->kSet()->at(l) < 5.0);  // int8: well under 5%
    }
    QVERIFY(cell(page, 1, KvQuantDemoPage::kMeasured).startsWith(QStringLiteral("K ")));
    QCOMPARE(cell(page, 1, KvQuantDemoPage::kPerLayer),
             bytes_text(std::llround(kv_bytes_per_token_per_layer(KvDtype::Int8, 4, 8))));
  }

  // KVSCOPE_SHOTS_DIR=dir: PNGs of the page at 1280x800 in both palettes (run under Xvfb).
  void screenshots() {
    const QString dir = qEnvironmentVariable("KVSCOPE_SHOTS_DIR");
    if (dir.isEmpty()) QSKIP("set KVSCOPE_SHOTS_DIR to save screenshots");
    for (const bool dark : {false, true}) {
      QApplication::setPalette(dark ? dark_palette() : light_palette());
      KvQuantDemoPage page;
      page.resize(1280, 800);
      page.show();
      QVERIFY(QTest::qWaitForWindowExposed(&page));
      page.setPanelFrame(measured_frame());
      QTest::qWait(50);  // charts lay out their titles and axes on posted events
      QVERIFY(page.grab().save(dir + (dark ? "/demo-quant-dark.png" : "/demo-quant-light.png")));
    }
  }
};

}  // namespace kvscope::ui

QTEST_MAIN(kvscope::ui::DemoQuantTest)
#include "demo_quant_test.moc"
