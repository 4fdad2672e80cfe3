// File > "Serve this model" on the real stories260K model, loopback only: the app's API
// server shares the engine with a chat that runs at the same time; answers come whole and
// streamed; the live panel labels an API request's sequence "API #n" and the status bar
// counts the server's requests; stopping the server ends its requests and frees their
// blocks; a port in use is a plain error in the notice bar; the chat still works after.
#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLineEdit>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QNetworkRequest>
#include <QPushButton>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTcpServer>
#include <QtTest>

#include <memory>
#include <vector>

#include "chat/chat_controller.h"
#include "chat/session.h"
#include "panel/block_map_widget.h"
#include "panel/live_panel.h"
#include "serving/api_serve_controller.h"
#include "serving/serve_dialog.h"
#include "ui_test_support.h"
#include "window/main_window.h"

namespace kvscope::ui {

class ApiServeTest : public QObject {
  Q_OBJECT

 private:
  // Starts serving from the dialog on `port`; the URL, or "" (then the notice bar says why).
  static QString serve(MainWindow& w, int port) {
    ServeDialog* dialog = w.showServeDialog();
    QSignalSpy started(w.apiServer(), &ApiServeController::started);
    QSignalSpy failed(w.apiServer(), &ApiServeController::failed);
    dialog->portBox()->setValue(port);
    dialog->toggleButton()->click();
    for (int i = 0; i < 100 && started.count() + failed.count() == 0; ++i) QTest::qWait(50);
    return started.count() > 0 ? dialog->url() : QString();
  }

  static QNetworkReply* chat(QNetworkAccessManager& net, const QString& url, const QString& text,
                             int max_tokens, bool stream) {
    QNetworkRequest request(QUrl(url + QStringLiteral("/v1/chat/completions")));
    request.setHeader(QNetworkRequest::ContentTypeHeader, QStringLiteral("application/json"));
    const QJsonObject body{
        {"model", "stories260K"},
        {"messages", QJsonArray{QJsonObject{{"role", "user"}, {"content", text}}}},
        {"max_tokens", max_tokens},
        {"temperature", 0},
        {"stream", stream}};
    return net.post(request, QJsonDocument(body).toJson(QJsonDocument::Compact));
  }

  static bool wait_done(QNetworkReply* reply, int ms = 10000) {
    QElapsedTimer clock;
    clock.start();
    while (!reply->isFinished() && clock.elapsed() < ms) QTest::qWait(10);
    return reply->isFinished();
  }

  // The text of an SSE stream's chunks, and whether it ended with [DONE].
  static QString streamed_text(const QByteArray& body, bool* done) {
    QString text;
    *done = false;
    for (const QByteArray& line : body.split('\n')) {
      if (!line.startsWith("data: ")) continue;
      const QByteArray data = line.mid(6).trimmed();
      if (data == "[DONE]") {
        *done = true;
        continue;
      }
      const QJsonArray choices = QJsonDocument::fromJson(data).object()["choices"].toArray();
      if (!choices.isEmpty())
        text += choices[0].toObject()["delta"].toObject()["content"].toString();
    }
    return text;
  }

 private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QSettings().clear();
  }

  void theServerSharesTheEngineWithAChatAndLetsGoOfItsSequencesWhenStopped() {
    KVSCOPE_QT_REQUIRE_SHARED(model, "models/stories260K.gguf");
    AppConfig config;
    config.demo_folder = test::scratch_dir();
    MainWindow w(config);
    w.show();
    w.setPanelVisible(true);
    QVERIFY2(test::load_model(w, model), qPrintable(w.noticeText()));
    QNetworkAccessManager net;

    // Long API replies first (request 1 among them), so the panel sees them while they run:
    // stories260K is fast, and frames come at most every 100 ms.
    const QString url = serve(w, 0);
    QVERIFY2(url.startsWith(QStringLiteral("http://127.0.0.1:")), qPrintable(w.noticeText()));
    QVERIFY(!url.endsWith(QStringLiteral(":0")));
    std::vector<std::unique_ptr<QNetworkReply>> long_ones;
    for (int i = 0; i < 6; ++i)
      long_ones.emplace_back(chat(net, url, "Tell me a story.", 460, true));
    // The window's chat runs at the same time.
    SamplingSettings s = w.chats()->currentSession()->sampling();
    s.max_tokens = 300;
    w.chats()->currentSession()->setSampling(s);
    w.chats()->sendMessage(QStringLiteral("Once upon a time"));
    QVERIFY(w.chats()->currentSession()->generating());

    BlockMapWidget* map = w.livePanel()->blockMap();
    const auto shows_first = [map] {
      for (const auto& [seq, n] : map->apiSequences()) {
        if (n == 1) return seq;
      }
      return SeqId{-1};
    };
    QTRY_VERIFY_WITH_TIMEOUT(shows_first() >= 0 || long_ones[0]->isFinished(), 10000);
    const SeqId seq = shows_first();
    QVERIFY2(seq >= 0, "no panel frame showed API request 1");
    QVERIFY2(map->ownerName(seq).startsWith(QStringLiteral("API #1 ")),
             qPrintable(map->ownerName(seq)));
    QVERIFY2(w.serveStatus().startsWith(QStringLiteral("serving on ") + url),
             qPrintable(w.serveStatus()));

    std::unique_ptr<QNetworkReply> whole(chat(net, url, "Hello", 24, false));
    std::unique_ptr<QNetworkReply> streamed(chat(net, url, "Hello", 24, true));
    QVERIFY(wait_done(whole.get()));
    QVERIFY(wait_done(streamed.get()));
    for (auto& r : long_ones) QVERIFY(wait_done(r.get()));
    QCOMPARE(whole->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt(), 200);
    const QJsonObject answer = QJsonDocument::fromJson(whole->readAll()).object();
    const QString whole_text =
        answer["choices"].toArray()[0].toObject()["message"].toObject()["content"].toString();
    QVERIFY(!whole_text.isEmpty());
    QCOMPARE(answer["usage"].toObject()["completion_tokens"].toInt(), 24);
    QCOMPARE(streamed->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt(), 200);
    bool done = false;
    const QString streamed_reply = streamed_text(streamed->readAll(), &done);
    QVERIFY(done);
    QCOMPARE(streamed_reply, whole_text);  // greedy: the same prompt gives the same text
    for (auto& r : long_ones) {
      bool long_done = false;
      QVERIFY(!streamed_text(r->readAll(), &long_done).isEmpty());
      QVERIFY(long_done);
    }

    // Stopping while a request streams: it ends, and every API block goes.
    QTRY_VERIFY_WITH_TIMEOUT(!w.chats()->currentSession()->generating(), 20000);
    std::unique_ptr<QNetworkReply> cut(chat(net, url, "Tell me a long story.", 460, true));
    QTRY_VERIFY_WITH_TIMEOUT(!map->apiSequences().empty() || cut->isFinished(), 10000);
    QSignalSpy stopped(w.apiServer(), &ApiServeController::stopped);
    w.showServeDialog()->toggleButton()->click();
    QTRY_VERIFY_WITH_TIMEOUT(stopped.count() == 1, 5000);
    QVERIFY(wait_done(cut.get(), 5000));
    QVERIFY(w.serveStatus().isEmpty());
    QTRY_VERIFY_WITH_TIMEOUT(map->apiSequences().empty() && map->usedBlocks() == 0, 5000);

    // The chat goes on on the same engine.
    const int items = static_cast<int>(w.chats()->currentSession()->items().size());
    w.chats()->sendMessage(QStringLiteral("And then?"));
    QTRY_VERIFY_WITH_TIMEOUT(!w.chats()->currentSession()->generating(), 20000);
    QCOMPARE(w.chats()->currentSession()->items().size(), items + 2);
    QVERIFY(!w.chats()->currentSession()->items().back().text.isEmpty());
  }

  // Eight clients streaming at once: each running one a labelled sequence in the panel, the
  // status bar counting them (how many are at once depends on the machine: at least two). With
  // $KVSCOPE_SCREENSHOT_DIR set, the window is saved as api-serve.png at that moment.
  void eightStreamingClientsAreLabelledAndCounted() {
    KVSCOPE_QT_REQUIRE_SHARED(model, "models/stories260K.gguf");
    AppConfig config;
    config.demo_folder = test::scratch_dir();
    MainWindow w(config);
    w.resize(1280, 800);
    w.show();
    w.setPanelVisible(true);
    QVERIFY2(test::load_model(w, model), qPrintable(w.noticeText()));
    const QString url = serve(w, 0);
    QVERIFY2(!url.isEmpty(), qPrintable(w.noticeText()));
    w.showServeDialog()->hide();
    // One manager per client: a QNetworkAccessManager opens at most 6 connections a host.
    std::vector<std::unique_ptr<QNetworkAccessManager>> nets;
    std::vector<std::unique_ptr<QNetworkReply>> clients;
    const char* prompts[] = {"Tell me a story.",    "A dog and a cat.",
                             "The sun was hot.",    "Lily went to the park.",
                             "Tim had a red ball.", "Once there was a fox.",
                             "The boat was small.", "Sue liked to sing."};
    for (const char* prompt : prompts) {
      nets.push_back(std::make_unique<QNetworkAccessManager>());
      clients.emplace_back(chat(*nets.back(), url, prompt, 460, true));
    }
    BlockMapWidget* map = w.livePanel()->blockMap();
    // The pool holds a few full contexts: the requests beyond them wait their turn.
    const QRegularExpression counts(
        QStringLiteral("\\d+ clients \u00b7 (\\d+) running \u00b7 (\\d+) waiting"));
    const auto all_counted = [&] {
      const QRegularExpressionMatch m = counts.match(w.serveStatus());
      return m.hasMatch() && m.captured(1).toInt() >= 2 &&
             static_cast<int>(map->apiSequences().size()) == m.captured(1).toInt();
    };
    QTRY_VERIFY_WITH_TIMEOUT(all_counted() || clients[0]->isFinished(), 10000);
    QVERIFY2(all_counted(), qPrintable(w.serveStatus()));
    for (const auto& [seq, n] : map->apiSequences()) {
      QVERIFY(map->ownerName(seq).startsWith(QStringLiteral("API #%1 ").arg(n)));
    }
    const QString dir = qEnvironmentVariable("KVSCOPE_SCREENSHOT_DIR");
    if (!dir.isEmpty()) QVERIFY(w.grab().save(dir + QStringLiteral("/api-serve.png")));
    for (auto& c : clients) QVERIFY(wait_done(c.get()));
  }

  // Loading a model ends the requests on the old one (the stream ends, nothing hangs) and
  // stops the server with a word in the notice bar; it starts again on the new model.
  void aModelSwitchEndsTheRequestsAndStopsTheServer() {
    KVSCOPE_QT_REQUIRE_SHARED(model, "models/stories260K.gguf");
    AppConfig config;
    config.demo_folder = test::scratch_dir();
    MainWindow w(config);
    w.show();
    w.setPanelVisible(true);
    QVERIFY2(test::load_model(w, model), qPrintable(w.noticeText()));
    const QString url = serve(w, 0);
    QVERIFY2(!url.isEmpty(), qPrintable(w.noticeText()));
    QNetworkAccessManager net;
    std::unique_ptr<QNetworkReply> cut(chat(net, url, "Tell me a story.", 460, true));
    BlockMapWidget* map = w.livePanel()->blockMap();
    QTRY_VERIFY_WITH_TIMEOUT(!map->apiSequences().empty() || cut->isFinished(), 10000);
    QSignalSpy stopped(w.apiServer(), &ApiServeController::stopped);
    QVERIFY2(test::load_model(w, model), qPrintable(w.noticeText()));
    QTRY_VERIFY_WITH_TIMEOUT(stopped.count() == 1, 10000);
    QVERIFY(wait_done(cut.get(), 10000));
    QVERIFY(!w.apiServer()->serving());
    QVERIFY2(w.noticeText().contains(QStringLiteral("API server stopped")),
             qPrintable(w.noticeText()));

    const QString again = serve(w, 0);
    QVERIFY2(!again.isEmpty(), qPrintable(w.noticeText()));
    std::unique_ptr<QNetworkReply> whole(chat(net, again, "Hello", 8, false));
    QVERIFY(wait_done(whole.get()));
    QVERIFY2(whole->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt() == 200,
             whole->readAll().constData());
  }

  void aPortInUseIsAPlainErrorInTheNoticeBar() {
    KVSCOPE_QT_REQUIRE_SHARED(model, "models/stories260K.gguf");
    QTcpServer taken;
    QVERIFY(taken.listen(QHostAddress::LocalHost, 0));
    AppConfig config;
    config.demo_folder = test::scratch_dir();
    MainWindow w(config);
    w.show();
    QVERIFY2(test::load_model(w, model), qPrintable(w.noticeText()));
    QVERIFY(serve(w, taken.serverPort()).isEmpty());
    QVERIFY2(w.noticeText().contains(QStringLiteral("could not start")),
             qPrintable(w.noticeText()));
    QVERIFY2(w.noticeText().contains(QString::number(taken.serverPort())),
             qPrintable(w.noticeText()));
    QVERIFY(!w.apiServer()->serving());
  }
};

}  // namespace kvscope::ui

QTEST_MAIN(kvscope::ui::ApiServeTest)
#include "api_serve_test.moc"
