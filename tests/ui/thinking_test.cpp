// A reasoning model's reply ("<think>\n...\n</think>\n\nanswer", Qwen 3): how the chat view
// splits it into reasoning and answer (whole, streamed with no closing tag yet, none, the
// empty section Qwen 3 emits with thinking off), and that only the display changes: the
// next request, the saved chat and the exports keep every character as generated.
#include <QTemporaryDir>
#include <QtTest>

#include "chat/chat_export.h"
#include "chat/chat_store.h"
#include "chat/session.h"
#include "chat/thinking.h"

namespace kvscope::ui {

namespace {

using Section = ReplyThinking::Section;

const QString kQwenReply = QStringLiteral(
    "<think>\nThe user says hello. I should greet them back.\n</think>\n\nHello! How can I help?");

}  // namespace

class ThinkingTest : public QObject {
  Q_OBJECT

 private slots:
  void aReplySplitsIntoReasoningAndAnswer_data() {
    QTest::addColumn<QString>("reply");
    QTest::addColumn<Section>("section");
    QTest::addColumn<QString>("reasoning");
    QTest::addColumn<QString>("answer");
    QTest::addColumn<bool>("shown");

    QTest::newRow("complete") << kQwenReply << Section::Closed
                              << "The user says hello. I should greet them back."
                              << "Hello! How can I help?" << true;
    QTest::newRow("whitespace before the tag")
        << "\n  <think>why</think>answer" << Section::Closed << "why"
        << "answer" << true;
    QTest::newRow("answer keeps its own layout") << "<think>x</think>\n\n# Title\n\n- a\n- b\n"
                                                 << Section::Closed << "x"
                                                 << "# Title\n\n- a\n- b\n"
                                                 << true;
    QTest::newRow("streaming, no closing tag yet")
        << "<think>\nLet me count: 1, 2" << Section::Open << "Let me count: 1, 2"
        << "" << true;
    QTest::newRow("streaming, only the opening tag") << "<think>\n"
                                                     << Section::Open << ""
                                                     << "" << true;
    QTest::newRow("streaming, the closing tag half there")
        << "<think>\nDone thinking.\n</thi" << Section::Open << "Done thinking."
        << "" << true;
    QTest::newRow("a lone < in the reasoning is held back until the next piece")
        << "<think>a <" << Section::Open << "a"
        << "" << true;
    QTest::newRow("closed, answer not begun") << "<think>\nhm\n</think>\n\n"
                                              << Section::Closed << "hm"
                                              << "" << true;
    QTest::newRow("empty thinking (Qwen 3, thinking off)")
        << "<think>\n\n</think>\n\nHello!" << Section::Closed << ""
        << "Hello!" << false;
    QTest::newRow("no thinking") << "Hello there." << Section::None << ""
                                 << "Hello there." << false;
    QTest::newRow("the tag later on is the answer's text")
        << "Use <think> tags like <think>this</think>." << Section::None << ""
        << "Use <think> tags like <think>this</think>." << false;
    QTest::newRow("a closing tag alone is the answer's text")
        << "</think> hi" << Section::None << ""
        << "</think> hi" << false;
    QTest::newRow("empty reply") << "" << Section::None << ""
                                 << "" << false;
  }

  void aReplySplitsIntoReasoningAndAnswer() {
    QFETCH(QString, reply);
    QFETCH(Section, section);
    QFETCH(QString, reasoning);
    QFETCH(QString, answer);
    QFETCH(bool, shown);
    const ReplyThinking r = split_thinking(reply);
    QCOMPARE(r.section, section);
    QCOMPARE(r.reasoning, reasoning);
    QCOMPARE(r.answer, answer);
    QCOMPARE(r.shown(), shown);
  }

  void theModelTheStoreAndTheExportsGetTheReplyAsGenerated() {
    ChatSession s(1, QStringLiteral("t"));
    s.beginUserTurn(QStringLiteral("Hi"));
    for (const QString& piece :
         {QStringLiteral("<think>"), QStringLiteral("\nThe user says "),
          QStringLiteral("hello. I should greet them back.\n"), QStringLiteral("</think>"),
          QStringLiteral("\n\nHello! How "), QStringLiteral("can I help?")}) {
      s.appendReplyText(piece, 1);
    }
    s.finishReply({1, FinishReason::EndOfGeneration, {}, 9, 30});
    QCOMPARE(s.items().back().text, kQwenReply);

    const ChatRequest next = s.beginUserTurn(QStringLiteral("Thanks"));
    QCOMPARE(next.messages.size(), 3u);
    QCOMPARE(next.messages[1].content, kQwenReply.toStdString());  // the thinking counts too
    s.finishReply({1, FinishReason::EndOfGeneration, {}, 40, 1});

    QVERIFY(chat_markdown(s).contains(kQwenReply));
    QVERIFY(QString::fromUtf8(chat_json(s)).contains(QStringLiteral("<think>\\nThe user says")));

    QTemporaryDir dir;
    QString error;
    auto store = ChatStore::open(dir.filePath(QStringLiteral("chats.db")), &error);
    QVERIFY2(store != nullptr, qPrintable(error));
    QVERIFY2(store->save(s, &error), qPrintable(error));
    QStringList problems;
    QObject owner;
    const std::vector<ChatSession*> loaded = store->load(&owner, &problems);
    QCOMPARE(loaded.size(), 1u);
    QCOMPARE(loaded[0]->items()[1].text, kQwenReply);
  }
};

}  // namespace kvscope::ui

QTEST_MAIN(kvscope::ui::ThinkingTest)
#include "thinking_test.moc"
