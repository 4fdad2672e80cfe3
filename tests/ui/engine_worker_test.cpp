// EngineWorker and ChatSession on the real stories260K model: replies stream into the
// chat, stop ends a reply within one step keeping its text, regenerate makes a new reply
// from the same prompt, and a broken model file is an error the worker survives. The
// worker runs on the test's thread here (its steps are posted events), so the test can
// act between two steps exactly; main_window_test covers it on its own thread.
#include <QFile>
#include <QFileInfo>
#include <QSignalSpy>
#include <QtTest>

#include <stdexcept>

#include "chat/session.h"
#include "run/engine.h"
#include "ui_test_support.h"
#include "worker/engine_worker.h"

namespace kvscope::ui {

class EngineWorkerTest : public QObject {
  Q_OBJECT

 private:
  // A worker with `model` loaded, and a session wired to it like the main window does.
  struct Rig {
    EngineWorker worker{test::scratch_dir()};
    ChatSession session{1, QStringLiteral("test")};
    PanelFrame last_frame;
    int frames = 0;

    explicit Rig(const QString& model) {
      QObject::connect(&worker, &EngineWorker::replyStarted, &session,
                       [this](ChatId, qint64 n) { session.replyStarted(n); });
      QObject::connect(
          &worker, &EngineWorker::replyText, &session,
          [this](ChatId, const QString& t, qint64 n) { session.appendReplyText(t, n); });
      QObject::connect(&worker, &EngineWorker::replyFinished, &session,
                       [this](const ReplyFinished& r) { session.finishReply(r); });
      QObject::connect(&worker, &EngineWorker::frameReady, &session, [this](const PanelFrame& f) {
        last_frame = f;
        ++frames;
      });
      SamplingSettings greedy;
      greedy.params.temperature = 0.0f;
      greedy.max_tokens = 200;
      session.setSampling(greedy);
      QSignalSpy loaded(&worker, &EngineWorker::modelLoaded);
      worker.loadModel({model, test::test_engine_options()});
      loaded_ok = loaded.count() == 1;
    }
    bool loaded_ok = false;
  };

 private slots:
  void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

  void promptStreamsIntoTheChatSession() {
    KVSCOPE_QT_REQUIRE_SHARED(model, "models/stories260K.gguf");
    Rig rig(model);
    QVERIFY(rig.loaded_ok);
    QSignalSpy text(&rig.worker, &EngineWorker::replyText);
    QSignalSpy finished(&rig.worker, &EngineWorker::replyFinished);
    rig.worker.submitChat(rig.session.beginUserTurn(QStringLiteral("Once upon a time")));
    QVERIFY(rig.session.generating());
    QVERIFY(finished.wait(60000));

    QString streamed;
    for (const auto& args : text) streamed += args.at(1).toString();
    QVERIFY2(text.count() >= 2, "the reply should arrive in several pieces, not at once");
    const auto done = finished.front().front().value<ReplyFinished>();
    QVERIFY(done.reason != FinishReason::Error);
    QVERIFY(done.generated_tokens > 1);
    QVERIFY(!streamed.isEmpty());
    QCOMPARE(rig.session.items().back().text, streamed);
    QVERIFY(!rig.session.generating());
    QCOMPARE(rig.session.contextUsed(), done.prompt_tokens + done.generated_tokens);
  }

  void stopEndsTheReplyWithinOneStepAndKeepsItsText() {
    KVSCOPE_QT_REQUIRE_SHARED(model, "models/stories260K.gguf");
    Rig rig(model);
    QVERIFY(rig.loaded_ok);
    qint64 at_stop = -1;
    QString text_at_stop;
    // Called between two steps (the text of a step is emitted after it).
    connect(&rig.worker, &EngineWorker::replyText, this,
            [&](ChatId chat, const QString&, qint64 n) {
              if (at_stop < 0 && n >= 5) {
                at_stop = n;
                text_at_stop = rig.session.items().back().text;
                rig.worker.stopChat(chat);
              }
            });
    QSignalSpy finished(&rig.worker, &EngineWorker::replyFinished);
    rig.worker.submitChat(rig.session.beginUserTurn(QStringLiteral("Once upon a time")));
    QVERIFY(finished.wait(60000));

    const auto done = finished.front().front().value<ReplyFinished>();
    QVERIFY2(at_stop >= 5, "the reply ended before the test could stop it");
    QCOMPARE(done.reason, FinishReason::Cancelled);
    QVERIFY2(done.generated_tokens <= at_stop + 1,
             qPrintable(
                 QStringLiteral("%1 tokens after the stop").arg(done.generated_tokens - at_stop)));
    QVERIFY(rig.session.items().back().text.startsWith(text_at_stop));
    QVERIFY(!text_at_stop.isEmpty());
    QCOMPARE(rig.session.items().back().state, ChatItem::State::Stopped);

    // The stopped reply's cache stays with the chat (its next turn shares it) until the
    // chat is forgotten; then nothing is left, and the next request works.
    QTRY_COMPARE_WITH_TIMEOUT(rig.last_frame.owners.size(), std::size_t{1}, 10000);
    QCOMPARE(rig.last_frame.owners.begin()->second, ChatId{1});
    QVERIFY(rig.last_frame.cache.n_used > 0);
    rig.worker.forgetChat(1);
    QCOMPARE(rig.last_frame.cache.n_used, std::int64_t{0});
    QVERIFY(rig.last_frame.owners.empty());
    finished.clear();
    rig.worker.submitChat(rig.session.beginUserTurn(QStringLiteral("The end")));
    QVERIFY(finished.wait(60000));
    QVERIFY(finished.front().front().value<ReplyFinished>().reason != FinishReason::Cancelled);
  }

  void regenerateMakesANewReplyFromTheSamePrompt() {
    KVSCOPE_QT_REQUIRE_SHARED(model, "models/stories260K.gguf");
    Rig rig(model);
    QVERIFY(rig.loaded_ok);
    SamplingSettings s = rig.session.sampling();
    s.params.temperature = 1.0f;
    s.params.seed = 5;
    rig.session.setSampling(s);
    QSignalSpy finished(&rig.worker, &EngineWorker::replyFinished);
    // Longer than one block of 16 tokens: a full block stays shared; a partly used one is
    // copied on the first write.
    rig.worker.submitChat(rig.session.beginUserTurn(
        QStringLiteral("Once upon a time there was a little girl named Lily who loved to play "
                       "in the park with her dog")));
    QVERIFY(finished.wait(60000));
    const auto first = finished.front().front().value<ReplyFinished>();
    QVERIFY(first.prompt_tokens > 16);
    QCOMPARE(first.reused_tokens, std::int64_t{0});
    const QString first_text = rig.session.items().back().text;

    // While it streams, the panel's frames show the prompt's blocks shared between the
    // old reply's kept cache and the new reply.
    rig.worker.setFrameInterval(0);  // a frame after every step
    std::int64_t max_shared = 0;
    connect(&rig.worker, &EngineWorker::frameReady, this, [&](const PanelFrame& f) {
      for (const auto& g : f.cache.groups) max_shared = std::max(max_shared, g.n_shared);
    });
    auto again = rig.session.beginRegenerate();
    QVERIFY(again.has_value());
    QCOMPARE(rig.session.items().size(), 2);
    finished.clear();
    rig.worker.submitChat(*again);
    QVERIFY(finished.wait(60000));
    const auto second = finished.front().front().value<ReplyFinished>();
    QCOMPARE(second.prompt_tokens, first.prompt_tokens);
    QCOMPARE(second.reused_tokens, first.prompt_tokens - 1);
    QVERIFY(!rig.session.items().back().text.isEmpty());
    QVERIFY2(rig.session.items().back().text != first_text,
             "a regenerated reply uses a new seed, so it should differ");
    QVERIFY2(max_shared > 0, "regenerate should share the prompt's blocks (refcount > 1)");
  }

  void brokenModelFileIsAnErrorAndTheWorkerKeepsWorking() {
    KVSCOPE_QT_REQUIRE_SHARED(model, "models/stories260K.gguf");
    Rig rig(model);
    QVERIFY(rig.loaded_ok);
    const QString broken = test::scratch_dir() + QStringLiteral("/broken.gguf");
    QFile file(broken);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(QByteArray("GGUF\x03\x00\x00\x00", 8) + QByteArray(64, '\xff'));
    file.close();

    QSignalSpy failed(&rig.worker, &EngineWorker::modelFailed);
    QSignalSpy loaded(&rig.worker, &EngineWorker::modelLoaded);
    rig.worker.loadModel({broken, test::test_engine_options()});
    QCOMPARE(failed.count(), 1);
    QVERIFY(failed.front().front().toString().contains(broken));
    QCOMPARE(loaded.count(), 1);  // the previous model again
    QCOMPARE(loaded.front().front().value<ModelInfo>().path, model);

    QSignalSpy finished(&rig.worker, &EngineWorker::replyFinished);
    rig.worker.submitChat(rig.session.beginUserTurn(QStringLiteral("Once upon a time")));
    QVERIFY(finished.wait(60000));
    QVERIFY(finished.front().front().value<ReplyFinished>().generated_tokens > 0);
  }

  // A load asked to stop (the app quitting, a newer model chosen) ends without a model and
  // without an error, and the model loaded before is not loaded again in its place.
  void aCancelledLoadEndsQuietlyAndRestoresNothing() {
    KVSCOPE_QT_REQUIRE_SHARED(model, "models/stories260K.gguf");
    Rig rig(model);
    QVERIFY(rig.loaded_ok);
    QSignalSpy failed(&rig.worker, &EngineWorker::modelFailed);
    QSignalSpy loaded(&rig.worker, &EngineWorker::modelLoaded);
    LoadRequest request{model, test::test_engine_options()};
    int polls = 0;
    request.options.cancel_load = [&polls] { return ++polls >= 2; };  // after reading the file
    rig.worker.loadModel(request);
    QVERIFY(polls >= 2);
    QCOMPARE(failed.count(), 0);
    QCOMPARE(loaded.count(), 0);
    QSignalSpy finished(&rig.worker, &EngineWorker::replyFinished);
    rig.worker.submitChat(rig.session.beginUserTurn(QStringLiteral("hi")));
    QCOMPARE(finished.count(), 1);  // no model: answered at once
  }

  // The controller's cancel: a load for an older request, or while quitting, stops.
  void theControllersCancelStopsOlderLoadsAndLoadsAtQuit() {
    KVSCOPE_QT_REQUIRE_SHARED(model, "models/stories260K.gguf");
    auto cancel = std::make_shared<LoadCancel>();
    EngineWorker worker(test::scratch_dir(), cancel);
    QSignalSpy loaded(&worker, &EngineWorker::modelLoaded);
    cancel->latest = 2;
    worker.loadModel({model, test::test_engine_options(), 1});  // superseded by request 2
    QCOMPARE(loaded.count(), 0);
    worker.loadModel({model, test::test_engine_options(), 2});
    QCOMPARE(loaded.count(), 1);
    cancel->quitting = true;
    worker.loadModel({model, test::test_engine_options(), 2});
    QCOMPARE(loaded.count(), 1);
  }

  // Truncated while a reply streams: the next step would read past the mapping's new end
  // (SIGBUS, the whole app gone). The worker notices before the step and drops the engine
  // with a message naming the file; the app goes on.
  void aModelFileTruncatedWhileInUseEndsTheReplyWithAMessage() {
    KVSCOPE_QT_REQUIRE_SHARED(model, "models/stories260K.gguf");
    const QString copy = test::scratch_dir() + QStringLiteral("/changing.gguf");
    QFile::remove(copy);
    QVERIFY(QFile::copy(model, copy));
    Rig rig(copy);
    QVERIFY(rig.loaded_ok);
    QSignalSpy text(&rig.worker, &EngineWorker::replyText);
    QSignalSpy finished(&rig.worker, &EngineWorker::replyFinished);
    QSignalSpy failed(&rig.worker, &EngineWorker::modelFailed);
    rig.worker.submitChat(rig.session.beginUserTurn(QStringLiteral("Once upon a time")));
    QVERIFY(text.wait(60000));
    QVERIFY(QFile::resize(copy, QFileInfo(copy).size() / 2));
    QVERIFY(finished.wait(60000));
    const auto done = finished.front().front().value<ReplyFinished>();
    QCOMPARE(done.reason, FinishReason::Error);
    QVERIFY2(done.error.contains(copy) && done.error.contains(QStringLiteral("size")),
             qPrintable(done.error));
    QCOMPARE(failed.count(), 1);

    rig.worker.submitChat(rig.session.beginUserTurn(QStringLiteral("again")));
    QCOMPARE(finished.count(), 2);  // answered at once: no model is loaded
    QCOMPARE(finished.back().front().value<ReplyFinished>().reason, FinishReason::Error);
  }

  // A step that throws (here a request's own callback) leaves the scheduler's state unknown:
  // the engine is dropped as on a model switch (the replies end with the message, the host
  // takes no tasks), the worker says so, and a model loaded again replies.
  void aStepThatThrowsDropsTheEngineAndAReloadWorks() {
    KVSCOPE_QT_REQUIRE_SHARED(model, "models/stories260K.gguf");
    Rig rig(model);
    QVERIFY(rig.loaded_ok);
    QSignalSpy finished(&rig.worker, &EngineWorker::replyFinished);
    QSignalSpy failed(&rig.worker, &EngineWorker::modelFailed);
    rig.worker.submitChat(rig.session.beginUserTurn(QStringLiteral("Once upon a time")));
    QVERIFY(rig.worker.post([](Engine& e) {
      GenerationRequest r;
      r.prompt = e.tokenize("Once", true);
      r.max_tokens = 4;
      e.submit(std::move(r),
               {[](const TokenEvent&) { throw std::runtime_error("callback broke"); }, {}});
    }));
    QVERIFY(failed.wait(60000));
    QVERIFY2(failed.front().front().toString().contains(QStringLiteral("callback broke")),
             qPrintable(failed.front().front().toString()));
    QCOMPARE(finished.count(), 1);
    QCOMPARE(finished.front().front().value<ReplyFinished>().reason, FinishReason::Error);
    QVERIFY(!rig.worker.alive());
    QVERIFY(!rig.worker.post([](Engine&) {}));

    QSignalSpy loaded(&rig.worker, &EngineWorker::modelLoaded);
    rig.worker.loadModel({model, test::test_engine_options()});
    QCOMPARE(loaded.count(), 1);
    rig.worker.submitChat(rig.session.beginUserTurn(QStringLiteral("again")));
    QVERIFY(finished.wait(60000));
    QVERIFY(finished.back().front().value<ReplyFinished>().reason != FinishReason::Error);
    QVERIFY(!rig.session.items().back().text.isEmpty());
  }

  // A task posted through the host that throws instead of answering its caller is reported
  // (the window shows it), and the tasks after it still run.
  void aTaskThatThrowsIsReportedAndTheNextTasksRun() {
    KVSCOPE_QT_REQUIRE_SHARED(model, "models/stories260K.gguf");
    Rig rig(model);
    QVERIFY(rig.loaded_ok);
    QSignalSpy task_failed(&rig.worker, &EngineWorker::taskFailed);
    bool next_ran = false;
    QVERIFY(rig.worker.post([](Engine&) { throw std::runtime_error("task broke"); }));
    QVERIFY(rig.worker.post([&next_ran](Engine&) { next_ran = true; }));
    QTRY_VERIFY_WITH_TIMEOUT(next_ran, 10000);
    QCOMPARE(task_failed.count(), 1);
    QVERIFY2(task_failed.front().front().toString().contains(QStringLiteral("task broke")),
             qPrintable(task_failed.front().front().toString()));
  }
};

}  // namespace kvscope::ui

QTEST_MAIN(kvscope::ui::EngineWorkerTest)
#include "engine_worker_test.moc"
