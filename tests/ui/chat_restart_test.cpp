// Issue #15's "Done when": chats survive a kill -9 during generation. The real `kvscope`
// binary (offscreen, its data, settings and cache folders in a scratch HOME) opens
// SmolLM2-135M-Instruct and is sent two messages; it is killed with SIGKILL while the second
// reply streams. Then the app's window starts again on the same data folder: the chat is
// listed, holds the first turn with its reply's tokens and the second message, but no part
// of the reply that was being written; opened with another model (stories260K) it says so,
// and continuing it reads the whole conversation into the cache again.
#include <QDir>
#include <QProcess>
#include <QSignalSpy>
#include <QtTest>

#include "chat/chat_controller.h"
#include "chat/chat_panel.h"
#include "chat/chat_store.h"
#include "chat/session.h"
#include "chat/sidebar.h"
#include "ui_test_support.h"
#include "window/main_window.h"

namespace kvscope::ui {

class ChatRestartTest : public QObject {
  Q_OBJECT

 private:
  // Reads the process's stdout until a line starts with `prefix` (or it ends / times out).
  static QStringList wait_for_line(QProcess& p, const QString& prefix, int timeout_ms,
                                   bool* found) {
    QStringList lines;
    QElapsedTimer clock;
    clock.start();
    *found = false;
    while (clock.elapsed() < timeout_ms && p.state() != QProcess::NotRunning) {
      if (!p.canReadLine() && !p.waitForReadyRead(200)) continue;
      while (p.canReadLine()) {
        lines << QString::fromUtf8(p.readLine()).trimmed();
        if (lines.back().startsWith(prefix)) {
          *found = true;
          return lines;
        }
      }
    }
    return lines;
  }

 private slots:
  void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

  void aKillDuringGenerationLosesOnlyTheReplyBeingWritten() {
    KVSCOPE_QT_REQUIRE_SHARED(smol, "models/SmolLM2-135M-Instruct.Q4_1.gguf");
    KVSCOPE_QT_REQUIRE_SHARED(stories, "models/stories260K.gguf");
    const QString app = qEnvironmentVariable("KVSCOPE_BINARY_DIR") + QStringLiteral("/bin/kvscope");
    if (!QFileInfo(app).isExecutable()) QSKIP(qPrintable(app + " is not built"));

    const QString home = test::scratch_dir();
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("HOME", home);
    env.insert("XDG_DATA_HOME", home + "/data");
    env.insert("XDG_CONFIG_HOME", home + "/config");
    env.insert("XDG_CACHE_HOME", home + "/cache");
    env.insert("QT_QPA_PLATFORM", "offscreen");
    QProcess p;
    p.setProcessEnvironment(env);
    p.setProcessChannelMode(QProcess::ForwardedErrorChannel);
    p.start(app, {smol, "--send", "What is the capital of France? One word.", "--send",
                  "Now write a long story about a fox who lives in Paris."});
    QVERIFY2(p.waitForStarted(10000), qPrintable(p.errorString()));
    bool found = false;
    QStringList lines = wait_for_line(p, QStringLiteral("streaming 2"), 60000, &found);
    QVERIFY2(found, qPrintable(lines.join(" | ")));
    p.kill();  // SIGKILL: no handler, no flush, no goodbye
    QVERIFY(p.waitForFinished(10000));
    QCOMPARE(p.exitStatus(), QProcess::CrashExit);
    lines << QString::fromUtf8(p.readAllStandardOutput()).split('\n', Qt::SkipEmptyParts);
    QVERIFY2(lines.contains(QStringLiteral("sent 2")), qPrintable(lines.join(" | ")));
    const bool second_finished = lines.filter(QStringLiteral("finished 2")).size() > 0;
    if (second_finished) qWarning("the second reply ended before the kill landed");

    // The app keeps its chats under AppDataLocation, here inside the scratch HOME.
    const QString db = home + "/data/KVScope/KVScope/chats.sqlite";
    QVERIFY2(QFileInfo::exists(db), qPrintable(db));
    AppConfig config;
    config.demo_folder = home + "/cache";
    config.chats_path = db;
    MainWindow w(config);
    w.show();
    QVERIFY2(w.chats()->store(), qPrintable(w.noticeText()));
    QVERIFY2(w.noticeText().isEmpty(), qPrintable(w.noticeText()));
    ChatSession* saved = nullptr;
    for (ChatSession* s : w.chats()->sessions()) {
      if (!s->items().isEmpty()) saved = s;
    }
    QVERIFY(saved);
    QCOMPARE(w.chats()->sessions().size(), 2);  // the saved chat and a new empty one
    const QVector<ChatItem>& items = saved->items();
    QCOMPARE(items.size(), second_finished ? 4 : 3);
    QCOMPARE(items[0].text, QStringLiteral("What is the capital of France? One word."));
    QCOMPARE(items[1].role, QStringLiteral("assistant"));
    QVERIFY(!items[1].text.isEmpty());
    QVERIFY(items[1].tokens > 0);
    QVERIFY(items[1].prompt_tokens > 0);
    QVERIFY(!items[1].finish_reason.isEmpty());
    QCOMPARE(items[2].text,
             QStringLiteral("Now write a long story about a fox who lives in Paris."));
    QCOMPARE(saved->model().name, QFileInfo(smol).fileName());
    QCOMPARE(saved->title(), QStringLiteral("What is the capital of France? One word."));

    // Opened with another model, the chat says so; continuing reads it all in again.
    QSignalSpy ready(&w, &MainWindow::modelReady);
    w.openModel(stories);
    QVERIFY(ready.wait(60000));
    w.chats()->selectChat(saved->id());
    QVERIFY2(w.chatPanel()->chatNote().contains(QFileInfo(smol).fileName()),
             qPrintable(w.chatPanel()->chatNote()));
    QSignalSpy finished(w.chats(), &ChatController::replyFinished);
    w.chats()->sendMessage(QStringLiteral("Go on."));
    QVERIFY(finished.wait(60000));
    const auto r = finished.front().front().value<ReplyFinished>();
    QVERIFY2(r.reason != FinishReason::Error, qPrintable(r.error));
    QCOMPARE(r.reused_tokens, 0);  // nothing of it was in this engine's cache
    QVERIFY2(r.prompt_tokens > items[1].prompt_tokens, "the conversation was not sent again");
    QVERIFY(w.chatPanel()->chatNote().isEmpty());  // its replies now come from stories260K
  }
};

}  // namespace kvscope::ui

QTEST_MAIN(kvscope::ui::ChatRestartTest)
#include "chat_restart_test.moc"
