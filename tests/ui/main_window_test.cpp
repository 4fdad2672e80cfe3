// The whole window with its engine thread, on the real stories260K model: a broken model
// file shows an error and the app keeps working; closing the window or switching model
// while a reply streams ends the reply cleanly (thread joined, no crash).
#include <QElapsedTimer>
#include <QFile>
#include <QSignalSpy>
#include <QtTest>

#include <memory>

#include "chat/chat_controller.h"
#include "chat/session.h"
#include "panel/live_panel.h"
#include "ui_test_support.h"
#include "window/main_window.h"

namespace kvscope::ui {

class MainWindowTest : public QObject {
  Q_OBJECT

 private:
  std::unique_ptr<MainWindow> make_window() {
    AppConfig config;
    config.demo_folder = test::scratch_dir();
    auto w = std::make_unique<MainWindow>(config);
    w->show();
    return w;
  }

  static void long_replies(MainWindow& w) {
    SamplingSettings s = w.chats()->currentSession()->sampling();
    s.max_tokens = 400;
    s.params.seed = 3;
    w.chats()->currentSession()->setSampling(s);
  }

 private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QSettings().clear();
  }

  void brokenModelFileShowsAnErrorAndTheAppKeepsWorking() {
    KVSCOPE_QT_REQUIRE_SHARED(model, "models/stories260K.gguf");
    auto w = make_window();
    QVERIFY(test::load_model(*w, model));
    QSignalSpy error(w.get(), &MainWindow::modelError);

    const QString broken = test::scratch_dir() + QStringLiteral("/truncated.gguf");
    QFile in(model), out(broken);
    QVERIFY(in.open(QIODevice::ReadOnly) && out.open(QIODevice::WriteOnly));
    out.write(in.read(in.size() / 2));  // tensors past the end of the file
    out.close();
    w->openModel(broken);
    QVERIFY(error.wait(60000));
    QVERIFY2(w->noticeText().contains(QStringLiteral("Cannot load")), qPrintable(w->noticeText()));
    QVERIFY(w->noticeText().contains(broken));
    QTRY_VERIFY_WITH_TIMEOUT(w->chats()->model().has_value(), 60000);  // the previous model is back
    QCOMPARE(w->chats()->model()->path, model);

    QSignalSpy finished(w->chats(), &ChatController::replyFinished);
    w->chats()->sendMessage(QStringLiteral("Once upon a time"));
    QVERIFY(finished.wait(60000));
    QVERIFY(!w->chats()->currentSession()->items().back().text.isEmpty());
  }

  void closingTheWindowWhileGeneratingJoinsTheEngineThread() {
    KVSCOPE_QT_REQUIRE_SHARED(model, "models/stories260K.gguf");
    auto w = make_window();
    QVERIFY(test::load_model(*w, model));
    long_replies(*w);
    QSignalSpy text(w->chats(), &ChatController::replyText);
    w->chats()->sendMessage(QStringLiteral("Once upon a time"));
    QVERIFY(text.wait(60000));
    QVERIFY(w->chats()->currentSession()->generating());
    QStringList asked;
    bool answer = false;
    w->setQuitConfirmation([&](const QString& work) { return asked << work, answer; });
    QVERIFY(!w->close());  // the user said no: the window and the reply go on
    QCOMPARE(asked.size(), 1);
    QVERIFY2(asked[0].contains(QStringLiteral("reply")), qPrintable(asked[0]));
    QVERIFY(w->isVisible());
    const int seen = text.count();
    QTRY_VERIFY_WITH_TIMEOUT(text.count() > seen, 30000);
    answer = true;
    QVERIFY(w->close());
    QElapsedTimer clock;
    clock.start();
    w.reset();  // joins the worker thread, deletes the engine on it
    QVERIFY2(clock.elapsed() < 10000, "closing waited for the reply to finish");
  }

  void closingWithNothingInProgressAsksNothing() {
    auto w = make_window();
    bool asked = false;
    w->setQuitConfirmation([&](const QString&) { return asked = true, false; });
    QVERIFY(w->workInProgress().isEmpty());
    QVERIFY(w->close());
    QVERIFY(!asked);
  }

  void switchingModelWhileGeneratingEndsTheReplyAndLoadsTheNewOne() {
    KVSCOPE_QT_REQUIRE_SHARED(model, "models/stories260K.gguf");
    auto w = make_window();
    QVERIFY(test::load_model(*w, model));
    long_replies(*w);
    QSignalSpy text(w->chats(), &ChatController::replyText);
    QSignalSpy finished(w->chats(), &ChatController::replyFinished);
    w->chats()->sendMessage(QStringLiteral("Once upon a time"));
    QVERIFY(text.wait(60000));
    w->openModel({});  // the demo model
    QTRY_VERIFY_WITH_TIMEOUT(finished.count() == 1, 60000);
    QCOMPARE(finished.front().front().value<ReplyFinished>().reason, FinishReason::Cancelled);
    QCOMPARE(w->chats()->currentSession()->items().back().state, ChatItem::State::Stopped);
    QTRY_VERIFY_WITH_TIMEOUT(w->chats()->model().has_value() && w->chats()->model()->demo, 120000);

    finished.clear();
    w->chats()->sendMessage(QStringLiteral("Hello"));
    QVERIFY(finished.wait(60000));
    QVERIFY(finished.front().front().value<ReplyFinished>().generated_tokens > 0);
    QTRY_VERIFY_WITH_TIMEOUT(w->livePanel()->framesDrawn() > 0, 10000);
  }
};

}  // namespace kvscope::ui

QTEST_MAIN(kvscope::ui::MainWindowTest)
#include "main_window_test.moc"
