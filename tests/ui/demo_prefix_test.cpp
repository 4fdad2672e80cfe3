// The prefix-sharing demo page: its controls drive the real KvCacheManager, and the figures
// it shows are what a manager driven the same way by the test reports (blocks in use,
// shared blocks, copy-on-write copies, bytes saved against N separate copies).
#include <QApplication>
#include <QLabel>
#include <QPushButton>
#include <QSpinBox>
#include <QtTest>

#include <cmath>

#include "demos/prefix/block_view.h"
#include "demos/prefix/prefix_page.h"
#include "kv/kv_cache_observer.h"
#include "plan/kv_footprint.h"
#include "sim/scenarios/prefix_sharing_scenario.h"
#include "util/error.h"
#include "widgets/number_text.h"
#include "window/app_palette.h"

namespace kvscope::ui {
namespace {

// The reference: N samples forked from one prompt, grown by `generated` tokens each, one
// token per sample at a time, as the issue describes; and the same as N separate sequences.
struct Reference {
  CacheSnapshot shared;
  CacheSnapshot separate;
  std::int64_t copies = 0;
};

Reference drive(const PrefixSharingParams& p, std::int64_t generated) {
  KvCacheManager shared(PrefixSharingScenario::cache_config(p));
  KvCacheManager separate(PrefixSharingScenario::cache_config(p));
  Reference r;
  shared.add_sequence(100);
  shared.grow(100, p.prompt_tokens);
  for (SeqId s = 1; s < p.n_samples; ++s) shared.fork(100, 100 + s);
  for (SeqId s = 0; s < p.n_samples; ++s) {
    separate.add_sequence(s);
    separate.grow(s, p.prompt_tokens);
  }
  for (std::int64_t t = 0; t < generated; ++t) {
    for (SeqId s = 0; s < p.n_samples; ++s) {
      std::vector<BlockCopy> copies;
      shared.grow(100 + s, 1, &copies);
      r.copies += static_cast<std::int64_t>(copies.size());
      separate.grow(s, 1);
    }
  }
  r.shared = snapshot_of(shared);
  r.separate = snapshot_of(separate);
  return r;
}

QString shown(const QWidget& page, const char* name) {
  const auto* label = page.findChild<QLabel*>(QLatin1String(name));
  return label ? label->text() : QStringLiteral("<no label %1>").arg(QLatin1String(name));
}

void set_controls(PrefixSharingDemoPage& page, const PrefixSharingParams& p) {
  page.findChild<QSpinBox*>(QStringLiteral("promptTokens"))
      ->setValue(static_cast<int>(p.prompt_tokens));
  page.findChild<QSpinBox*>(QStringLiteral("samples"))->setValue(static_cast<int>(p.n_samples));
  page.findChild<QSpinBox*>(QStringLiteral("generatedTokens"))
      ->setValue(static_cast<int>(p.generated_tokens));
  page.findChild<QSpinBox*>(QStringLiteral("blockSize"))->setValue(static_cast<int>(p.block_size));
}

void click(PrefixSharingDemoPage& page, const char* button) {
  QTest::mouseClick(page.findChild<QPushButton*>(QLatin1String(button)), Qt::LeftButton);
}

// The page's figures equal the reference's, number for number.
void expect_figures(const PrefixSharingDemoPage& page, const Reference& r) {
  QCOMPARE(shown(page, "figureUsedBlocks"), QStringLiteral("%1 blocks \u00b7 %2")
                                                .arg(r.shared.n_used)
                                                .arg(bytes_text(r.shared.used_bytes)));
  QCOMPARE(shown(page, "figureSeparateBlocks"), QStringLiteral("%1 blocks \u00b7 %2")
                                                    .arg(r.separate.n_used)
                                                    .arg(bytes_text(r.separate.used_bytes)));
  QCOMPARE(shown(page, "figureSharedBlocks"), QStringLiteral("%1 blocks").arg(r.shared.n_shared));
  QCOMPARE(shown(page, "figureCowCopies"), QString::number(r.copies));
  const std::int64_t saved = r.separate.used_bytes - r.shared.used_bytes;
  QVERIFY(shown(page, "figureSaved").startsWith(bytes_text(saved) + QStringLiteral(" (")));
}

}  // namespace

class DemoPrefixTest : public QObject {
  Q_OBJECT

 private slots:
  void fourSamplesOfA40TokenPromptShowWhatTheManagerReports() {
    PrefixSharingDemoPage page;
    const PrefixSharingParams p{40, 4, 24, 16};
    set_controls(page, p);

    // Prefill and fork: the prompt's 3 blocks (16 + 16 + 8 tokens) all shared 4 ways.
    click(page, "step");
    Reference r = drive(p, 0);
    expect_figures(page, r);
    QCOMPARE(r.shared.n_used, 3);
    QCOMPARE(r.shared.n_shared, 3);
    QCOMPARE(r.separate.n_used, 12);
    QCOMPARE(shown(page, "figureTokens"), QStringLiteral("40"));

    // First token: three samples copy the shared 8-token tail, the last keeps it.
    click(page, "step");
    r = drive(p, 1);
    expect_figures(page, r);
    QCOMPARE(r.copies, 3);
    QCOMPARE(r.shared.n_shared, 2);

    // To the end: 64 tokens each, 2 shared blocks + 2 own blocks per sample.
    click(page, "runToEnd");
    QVERIFY(page.scenario().done());
    r = drive(p, 24);
    expect_figures(page, r);
    QCOMPARE(r.shared.n_used, 10);
    QCOMPARE(r.separate.n_used, 16);
    QCOMPARE(shown(page, "figureTokens"), QStringLiteral("64"));
    QCOMPARE(shown(page, "figureSaved"),
             QStringLiteral("%1 (37.5%)").arg(bytes_text(6 * r.shared.groups[0].block_bytes)));
    QVERIFY(!page.findChild<QPushButton*>(QStringLiteral("step"))->isEnabled());
  }

  // The toy cache's line is the scenario's own cache, each figure from its config.
  void theCacheLineDescribesTheScenariosCache() {
    PrefixSharingDemoPage page;
    const PrefixSharingParams p{40, 4, 24, 32};
    set_controls(page, p);
    const KvCacheConfig c = PrefixSharingScenario::cache_config(p);
    QCOMPARE(
        shown(page, "cacheShape"),
        QStringLiteral("Toy cache: %1 layers \u00d7 %2 KV heads \u00d7 head_dim %3, f16: %4 per "
                       "token, %5 per block of 32 tokens.")
            .arg(kv_config_n_layers(c))
            .arg(c.n_kv_heads)
            .arg(c.head_dim)
            .arg(bytes_text(std::llround(kv_bytes_per_token(c))))
            .arg(bytes_text(kv_block_set_bytes(c))));
  }

  void savedBytesAreTheManagersSharedSavings_data() {
    QTest::addColumn<int>("prompt");
    QTest::addColumn<int>("samples");
    QTest::addColumn<int>("generated");
    QTest::addColumn<int>("block");
    QTest::newRow("partial tail") << 40 << 4 << 24 << 16;
    QTest::newRow("prompt on a block boundary") << 48 << 6 << 5 << 16;
    QTest::newRow("one sample") << 40 << 1 << 10 << 16;
    QTest::newRow("block size 2, 16 samples") << 7 << 16 << 3 << 2;
    QTest::newRow("the largest run the page offers") << 512 << 16 << 128 << 2;
    QTest::newRow("odd block, long run") << 100 << 3 << 80 << 7;
  }

  void savedBytesAreTheManagersSharedSavings() {
    QFETCH(int, prompt);
    QFETCH(int, samples);
    QFETCH(int, generated);
    QFETCH(int, block);
    PrefixSharingDemoPage page;
    const PrefixSharingParams p{prompt, samples, generated, block};
    set_controls(page, p);
    click(page, "runToEnd");
    const Reference r = drive(p, generated);
    expect_figures(page, r);
    // The two ways of counting the saving agree: what N copies add is sum (refcount - 1).
    QCOMPARE(r.separate.used_bytes - r.shared.used_bytes, r.shared.shared_savings_bytes);
    // Copies: every sample but one copies a shared partly filled tail, once.
    const bool partial_tail = prompt % block != 0 && generated > 0;
    QCOMPARE(r.copies, partial_tail ? samples - 1 : 0);
  }

  void blockViewRowsAreTheSamplesBlockTables() {
    PrefixSharingDemoPage page;
    set_controls(page, {40, 4, 24, 16});
    click(page, "step");
    click(page, "step");
    const auto& rows = page.blockView()->rows();
    QCOMPARE(rows.size(), std::size_t{4});
    const KvCacheManager& m = page.scenario().shared();
    int copied_tails = 0;
    for (std::size_t s = 0; s < rows.size(); ++s) {
      const BlockTable& t = m.block_table(static_cast<SeqId>(s), 0);
      QCOMPARE(static_cast<std::int64_t>(rows[s].size()), t.n_blocks());
      for (std::size_t i = 0; i < 2; ++i) {  // the two full prompt blocks, shared by all
        QCOMPARE(rows[s][i].id, rows[0][i].id);
        QCOMPARE(rows[s][i].refcount, 4);
      }
      QCOMPARE(rows[s][2].id, t.block(2));
      QCOMPARE(rows[s][2].refcount, 1);
      QCOMPARE(rows[s][2].filled, 9);
      copied_tails += rows[s][2].copied ? 1 : 0;
    }
    QCOMPARE(copied_tails, 3);
    // The pool strip is the snapshot's blocks: 16 (N separate copies' worth), 2 shared by
    // all 4, 4 own tails, 10 free.
    const auto& pool = page.blockView()->pool();
    QCOMPARE(pool.size(), std::size_t{16});
    int shared_blocks = 0, own = 0, free = 0;
    for (const auto& b : pool) {
      shared_blocks += b.refcount == 4 ? 1 : 0;
      own += b.refcount == 1 ? 1 : 0;
      free += b.refcount == 0 ? 1 : 0;
    }
    QCOMPARE(shared_blocks, 2);
    QCOMPARE(own, 4);
    QCOMPARE(free, 10);
    page.resize(1000, 600);
    page.show();
    QVERIFY(QTest::qWaitForWindowExposed(&page));
    const QString shared = page.blockView()->describeAt(page.blockView()->cellRect(1, 0).center());
    QVERIFY2(shared.contains(QStringLiteral("Sample 1, logical block 0")), qPrintable(shared));
    QVERIFY2(shared.contains(QStringLiteral("refcount: 4 (shared)")), qPrintable(shared));
    const QRect tail = page.blockView()->cellRect(0, 2);
    QVERIFY(!tail.isEmpty());
    QVERIFY(page.blockView()->describeAt(tail.center()).contains(QStringLiteral("copy-on-write")));
  }

  void playRunsToTheEndAndStops() {
    PrefixSharingDemoPage page;
    set_controls(page, {20, 3, 6, 8});
    page.findChild<QPushButton*>(QStringLiteral("play"))->click();
    QVERIFY(page.isPlaying());
    QTRY_VERIFY_WITH_TIMEOUT(page.scenario().done(), 10000);
    QVERIFY(!page.isPlaying());
    QVERIFY(!page.findChild<QPushButton*>(QStringLiteral("play"))->isChecked());
  }

  void changingAControlStartsOver() {
    PrefixSharingDemoPage page;
    click(page, "runToEnd");
    QVERIFY(page.scenario().done());
    page.findChild<QSpinBox*>(QStringLiteral("samples"))->setValue(8);
    QCOMPARE(page.scenario().steps_taken(), 0);
    QCOMPARE(page.scenario().params().n_samples, 8);
    QCOMPARE(shown(page, "figureCowCopies"), QStringLiteral("0"));
    QVERIFY(page.blockView()->rows().empty());
    QVERIFY(page.findChild<QPushButton*>(QStringLiteral("step"))->isEnabled());
  }

  void outOfRangeParametersAreRejectedByTheScenario() {
    QVERIFY_THROWS_EXCEPTION(UsageError, PrefixSharingScenario({40, 17, 24, 16}));
    QVERIFY_THROWS_EXCEPTION(UsageError, PrefixSharingScenario({0, 4, 24, 16}));
  }

  // KVSCOPE_SHOTS_DIR=dir: PNGs of the page at 1280x800 in both palettes (run under Xvfb).
  void screenshots() {
    const QString dir = qEnvironmentVariable("KVSCOPE_SHOTS_DIR");
    if (dir.isEmpty()) QSKIP("set KVSCOPE_SHOTS_DIR to save screenshots");
    for (const bool dark : {false, true}) {
      QApplication::setPalette(dark ? dark_palette() : light_palette());
      PrefixSharingDemoPage page;
      page.resize(1280, 800);
      page.show();
      QVERIFY(QTest::qWaitForWindowExposed(&page));
      // Light: the example a few tokens in; dark: 16 samples, many blocks.
      if (dark) set_controls(page, {100, 16, 60, 8});
      for (int i = 0; i < (dark ? 30 : 6); ++i) page.step();
      QTest::qWait(50);
      QVERIFY(page.grab().save(dir + (dark ? "/demo-prefix-dark.png" : "/demo-prefix-light.png")));
    }
  }
};

}  // namespace kvscope::ui

QTEST_MAIN(kvscope::ui::DemoPrefixTest)
#include "demo_prefix_test.moc"
