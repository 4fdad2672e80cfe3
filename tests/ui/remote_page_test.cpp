// The "Remote" page: renders the vLLM and llama-server fixture dumps (tests/engine/remote/
// fixtures) through the same slot the poller feeds, with the planner's KV line; shows bad
// answers (HTML, JSON, a body cut short, a refused port, a bad URL) in its status line and
// keeps its charts; retries a refused server, and waits out a silent one off the GUI thread
// (which keeps turning); sits in the main window as the "Remote" tab; and follows
// kvscope-cli serve (stories260K) under a little load from curl. With $KVSCOPE_SCREENSHOT_DIR set,
// it saves remote-fixtures.png and remote-live.png.
#include <QComboBox>
#include <QElapsedTimer>
#include <QLabel>
#include <QLineSeries>
#include <QProcess>
#include <QPushButton>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QTabWidget>
#include <QtTest>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "../engine/remote/remote_fixtures.h"
#include "remote/remote_page.h"
#include "remote/time_chart.h"
#include "ui_test_support.h"
#include "window/main_window.h"

namespace kvscope::ui {
namespace {

enum Chart { kKv, kQueue, kPreempt, kPrefix, kTokens, kTtft };

ScrapeResult fixture_scrape(const char* name) {
  return read_metrics_body(kvscope::test::read_remote_fixture(name), "text/plain; version=0.0.4");
}

QList<QPointF> points(const RemotePage& page, Chart chart, int line) {
  return page.charts()[chart]->series(line)->points();
}

void select(QComboBox* box, const QString& slug) {
  const int i = box->findData(slug);
  QVERIFY2(i >= 0, qPrintable(slug));
  box->setCurrentIndex(i);
}

void save_shot(QWidget& w, const QString& name) {
  const QString dir = qEnvironmentVariable("KVSCOPE_SCREENSHOT_DIR");
  if (dir.isEmpty()) return;
  QVERIFY(w.grab().save(dir + "/" + name + ".png"));
}

int closed_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

}  // namespace

class RemotePageTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

  void rendersVllmDumpsWithThePlannersLine() {
    RemotePage page;
    page.resize(1280, 760);
    select(page.modelBox(), "llama-3.1-8b");
    select(page.gpuBox(), "rtx-3090");
    page.addScrape(100.0, fixture_scrape("vllm_v1_1.prom"));
    page.addScrape(110.0, fixture_scrape("vllm_v1_2.prom"));
    QVERIFY2(page.statusLabel()->text().contains("Connected: vLLM (v1 metrics)"),
             qPrintable(page.statusLabel()->text()));
    const QString server = page.serverLabel()->text();
    QVERIFY2(server.contains("KV pool 1,952 blocks x 16 = 31,232 tokens"), qPrintable(server));
    QVERIFY2(server.contains("planner: llama-3.1-8b on rtx-3090 at 0.90 as vLLM"),
             qPrintable(server));
    // the planned pool beside the server's cache_config_info pool, with the difference in %
    QVERIFY2(
        server.contains(QRegularExpression(R"(tokens \([+-]\d+\.\d% against the server's pool\))")),
        qPrintable(server));
    QVERIFY(page.serverLabel()->toolTip().contains("activation"));
    QVERIFY(page.plan());
    const double planned_tokens = static_cast<double>(page.plan()->tokens);
    // the difference is engine/remote's (compare_kv), not the page's own arithmetic
    ServerSample pool;
    pool.kv_pool_blocks = 1952;
    pool.kv_block_size = 16;
    const std::optional<double> diff =
        compare_kv(pool, std::nullopt, *page.plan()).pool_difference_pct;
    QVERIFY(diff);
    QVERIFY2(server.contains(QStringLiteral("(%1% against the server's pool)")
                                 .arg(QString::asprintf("%+.1f", *diff))),
             qPrintable(server));

    const QList<QPointF> kv = points(page, kKv, 0);
    QCOMPARE(kv.size(), 2);
    QCOMPARE(kv[0], QPointF(0.0, 25.14));
    QCOMPARE(kv[1], QPointF(10.0, 97.18));
    const QList<QPointF> planned = points(page, kKv, 1);
    QCOMPARE(planned.size(), 2);
    QVERIFY(qFuzzyCompare(planned[1].y(), 100.0 * 0.9718 * 31232 / planned_tokens));
    QCOMPARE(planned[1].y(), *compare_kv(ServerSample{}, 0.9718 * 31232, *page.plan()).planned_pct);
    QVERIFY(planned[1].y() < kv[1].y());  // the planner's pool is the larger one
    QCOMPARE(points(page, kQueue, 0).back().y(), 24.0);
    QCOMPARE(points(page, kQueue, 1).back().y(), 5.0);
    QCOMPARE(points(page, kPreempt, 0).back().y(), 3.0);
    QVERIFY(qFuzzyCompare(points(page, kPrefix, 0).back().y(), 100.0 * 12000 / 23000));
    QCOMPARE(points(page, kTokens, 0), QList<QPointF>({{10.0, 380.0}}));  // (99011-95211)/10
    QCOMPARE(points(page, kTtft, 0).size(), 1);
    QVERIFY(qFuzzyCompare(points(page, kTtft, 0)[0].y(), 1000 * (0.25 + 0.25 * 5.0 / 22.0)));
    page.show();
    QVERIFY(QTest::qWaitForWindowExposed(&page));
    save_shot(page, "remote-fixtures");
  }

  void rendersLlamaServerDumps() {
    RemotePage page;
    page.addScrape(0.0, fixture_scrape("llama_server_kv_1.prom"));
    page.addScrape(10.0, fixture_scrape("llama_server_kv_2.prom"));
    QVERIFY(page.statusLabel()->text().contains("llama-server"));
    QCOMPARE(points(page, kKv, 0).back().y(), 44.21);
    QCOMPARE(points(page, kQueue, 0).back().y(), 4.0);
    QCOMPARE(points(page, kQueue, 1).back().y(), 3.0);
    QCOMPARE(points(page, kTokens, 0).back().y(), (7967.0 - 7801.0) / 10.0);
    QVERIFY(points(page, kTtft, 0).isEmpty());  // llama-server has no TTFT histogram
    QVERIFY(points(page, kPreempt, 0).isEmpty());
    // current builds: no KV gauge, so no KV line, and the planner says why it draws none
    RemotePage now;
    select(now.modelBox(), "llama-3.1-8b");
    now.addScrape(0.0, fixture_scrape("llama_server_1.prom"));
    QVERIFY(points(now, kKv, 0).isEmpty());
    QVERIFY(points(now, kKv, 1).isEmpty());
    QVERIFY2(now.serverLabel()->text().contains("does not say how many tokens it holds"),
             qPrintable(now.serverLabel()->text()));
  }

  void showsBadAnswersAndKeepsTheCharts() {
    RemotePage page;
    page.addScrape(0.0, fixture_scrape("vllm_v0_1.prom"));
    page.addScrape(1.0, fixture_scrape("vllm_v0_2.prom"));
    const std::string dump = kvscope::test::read_remote_fixture("vllm_v0_2.prom");
    struct Case {
      ScrapeResult result;
      const char* says;
    };
    const Case cases[] = {
        {read_metrics_body("<!DOCTYPE html><title>Sign in</title>", "text/html"),
         "Not metrics: an HTML page"},
        {read_metrics_body("{\"detail\":\"Not Found\"}", "application/json"), "Not metrics: JSON"},
        {read_metrics_body(dump.substr(0, dump.size() - 20), "text/plain"), "cut short"},
    };
    for (const Case& c : cases) {
      page.addScrape(2.0, c.result);
      QVERIFY2(page.statusLabel()->text().contains(c.says), qPrintable(page.statusLabel()->text()));
    }
    QCOMPARE(page.failedScrapes(), 3);
    QCOMPARE(points(page, kKv, 0).size(), 2);  // what was read stays
    page.addScrape(3.0, fixture_scrape("vllm_v0_2.prom"));
    QVERIFY(page.statusLabel()->text().contains("Connected"));
  }

  void retriesARefusedServer() {
    RemotePage page;
    page.setPollInterval(0.2);
    page.connectTo(QStringLiteral("http://127.0.0.1:%1").arg(closed_port()));
    QVERIFY(page.connected());
    QCOMPARE(page.connectButton()->text(), QStringLiteral("Disconnect"));
    QTRY_VERIFY_WITH_TIMEOUT(page.failedScrapes() >= 2, 10000);
    QVERIFY2(page.statusLabel()->text().contains("Refused: connection refused"),
             qPrintable(page.statusLabel()->text()));
    QVERIFY(page.statusLabel()->text().contains("Retrying every second"));
    page.disconnectFromServer();
    QVERIFY(!page.connected());
    QCOMPARE(page.connectButton()->text(), QStringLiteral("Connect"));
    const int failed = page.failedScrapes();
    QTest::qWait(600);
    QCOMPARE(page.failedScrapes(), failed);  // nothing arrives after a disconnect
  }

  void aSilentServerTimesOutWithoutBlockingTheGui() {
    // A socket that listens but never accepts: each scrape waits its 2 s read timeout. The
    // GUI thread keeps turning meanwhile: a 20 ms timer never misses a whole second.
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    QCOMPARE(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    QCOMPARE(::listen(fd, 4), 0);
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
    RemotePage page;
    QElapsedTimer since_tick;
    since_tick.start();
    qint64 longest_gap = 0;
    QTimer timer;
    connect(&timer, &QTimer::timeout,
            [&] { longest_gap = std::max(longest_gap, since_tick.restart()); });
    timer.start(20);
    page.connectTo(QStringLiteral("http://127.0.0.1:%1").arg(ntohs(addr.sin_port)));
    QTRY_VERIFY_WITH_TIMEOUT(page.failedScrapes() >= 1, 15000);
    timer.stop();
    QVERIFY2(page.statusLabel()->text().contains("Timed out: connected, but no answer within 2 s"),
             qPrintable(page.statusLabel()->text()));
    page.disconnectFromServer();  // returns at once, though the next scrape may be waiting
    ::close(fd);
    QVERIFY2(longest_gap < 1000, qPrintable(QString::number(longest_gap)));
  }

  void aBadUrlIsSaidAndNothingStarts() {
    RemotePage page;
    page.connectTo(QStringLiteral("https://example.com/metrics"));
    QVERIFY(!page.connected());
    QVERIFY2(page.statusLabel()->text().contains("only http://"),
             qPrintable(page.statusLabel()->text()));
  }

  void isTheMainWindowsRemoteTab() {
    AppConfig config;
    config.demo_folder = test::scratch_dir();
    MainWindow w(config);
    auto* page = w.findChild<RemotePage*>();
    QVERIFY(page != nullptr);
    QCOMPARE(w.pages()->tabText(w.pages()->indexOf(page)), QStringLiteral("Remote"));
  }

  void followsKvscopeServeUnderLoad() {
    KVSCOPE_QT_REQUIRE_SHARED(model, "models/stories260K.gguf");
    const QString cli = qEnvironmentVariable("KVSCOPE_BINARY_DIR") + "/bin/kvscope-cli";
    if (!QFileInfo::exists(cli)) QSKIP(qPrintable("needs " + cli + " (build kvscope-cli)"));
    if (QStandardPaths::findExecutable("curl").isEmpty()) QSKIP("needs curl for the load");
    QProcess server;
    server.start(cli, {"serve", "-m", model, "--port", "0", "-np", "2", "-t", "1"});
    QVERIFY(server.waitForStarted());
    int port = 0;
    QElapsedTimer clock;
    clock.start();
    QByteArray out;
    while (port == 0 && clock.elapsed() < 30000 && server.state() == QProcess::Running) {
      server.waitForReadyRead(500);
      out += server.readAllStandardOutput();
      const auto m = QRegularExpression("listening on http://127\\.0\\.0\\.1:(\\d+)").match(out);
      if (m.hasMatch()) port = m.captured(1).toInt();
    }
    QVERIFY2(port > 0, out.constData());

    RemotePage page;
    page.resize(1280, 760);
    page.setPollInterval(0.25);
    page.connectTo(QStringLiteral("http://127.0.0.1:%1").arg(port));
    QTRY_VERIFY_WITH_TIMEOUT(page.goodScrapes() >= 1, 10000);
    QVERIFY2(page.statusLabel()->text().contains("Connected: KVScope"),
             qPrintable(page.statusLabel()->text()));
    // Load: rounds of 8 completions of 300 tokens at once, 2 decoded together, 6 waiting.
    // A round of stories260K on one thread can end between two scrapes on a fast machine,
    // so rounds go on until a scrape has caught requests running (at most a minute).
    const QString body = QStringLiteral(
        R"({"model":"stories260K","prompt":"Once upon a time","max_tokens":300,"temperature":0})");
    const auto saw = [&](auto&& pred) {
      for (const WatchPoint& w : page.series().points()) {
        if (pred(w)) return true;
      }
      return false;
    };
    const auto saw_running = [&] {
      return saw([](const WatchPoint& w) { return w.running.value_or(0) > 0; });
    };
    const auto finish_round = [](std::vector<std::unique_ptr<QProcess>>& round) {
      for (auto& p : round) {
        if (p->state() != QProcess::NotRunning && !p->waitForFinished(60000)) return false;
        if (p->exitCode() != 0) return false;  // curl did not get its completion
      }
      round.clear();
      return true;
    };
    std::vector<std::unique_ptr<QProcess>> load;
    QElapsedTimer load_clock;
    load_clock.start();
    int rounds = 0;
    while ((rounds == 0 || !saw_running()) && load_clock.elapsed() < 60000) {
      QVERIFY(finish_round(load));
      for (int i = 0; i < 8; ++i) {
        auto& p = load.emplace_back(std::make_unique<QProcess>());
        p->start("curl", {"-s", "-m", "60", "-H", "Content-Type: application/json", "-d", body,
                          QStringLiteral("http://127.0.0.1:%1/v1/completions").arg(port)});
      }
      ++rounds;
      // Let the GUI scrape while the round runs.
      for (int waited = 0; waited < 5000 && !saw_running(); waited += 50) {
        QTest::qWait(50);
        bool all_done = true;
        for (auto& p : load) all_done = all_done && p->state() == QProcess::NotRunning;
        if (all_done) break;
      }
    }
    QVERIFY(finish_round(load));
    QTRY_VERIFY_WITH_TIMEOUT(
        saw([](const WatchPoint& w) { return w.generation_tokens_per_s.value_or(0) > 0; }), 60000);
    QTRY_VERIFY_WITH_TIMEOUT(page.series().points().back().running.value_or(-1) == 0, 10000);
    QVERIFY(saw([](const WatchPoint& w) { return w.kv_usage_pct.value_or(0) > 0; }));
    QVERIFY2(saw_running(), qPrintable(QString::number(rounds) + " rounds of load"));
    QVERIFY(saw([](const WatchPoint& w) { return w.ttft_p50.has_value(); }));
    QVERIFY(!points(page, kTokens, 0).isEmpty());
    page.show();
    QVERIFY(QTest::qWaitForWindowExposed(&page));
    save_shot(page, "remote-live");
    server.terminate();
    QVERIFY(server.waitForFinished(20000));
    QTRY_VERIFY_WITH_TIMEOUT(page.statusLabel()->text().contains("Refused"), 10000);
  }
};

}  // namespace kvscope::ui

QTEST_MAIN(kvscope::ui::RemotePageTest)
#include "remote_page_test.moc"
