// ChatSession (what the next request holds: system prompt, earlier turns, a stopped reply's
// text; regenerate and edit-and-resend) and ChatInput (Enter sends, Shift+Enter adds a
// line, Esc stops). No model needed.
#include <QSignalSpy>
#include <QtTest>

#include "chat/input.h"
#include "chat/session.h"

namespace kvscope::ui {

class ChatSessionTest : public QObject {
  Q_OBJECT

 private slots:
  void requestHoldsSystemPromptAndEarlierTurnsButNotTheEmptyReply() {
    ChatSession s(3, QStringLiteral("t"));
    s.setSystemPrompt(QStringLiteral("Be brief."));
    const ChatRequest first = s.beginUserTurn(QStringLiteral("Hi"));
    QCOMPARE(first.chat, 3);
    QCOMPARE(first.messages.size(), 2u);
    QCOMPARE(first.messages[0].role, std::string("system"));
    QCOMPARE(first.messages[1].content, std::string("Hi"));
    s.appendReplyText(QStringLiteral("Hel"), 1);
    s.appendReplyText(QStringLiteral("lo"), 2);
    s.finishReply({3, FinishReason::Cancelled, {}, 5, 2});
    QCOMPARE(s.items().back().text, QStringLiteral("Hello"));
    QCOMPARE(s.items().back().state, ChatItem::State::Stopped);
    QCOMPARE(s.contextUsed(), 7);

    const ChatRequest second = s.beginUserTurn(QStringLiteral("Again"));
    QCOMPARE(second.messages.size(), 4u);  // system, Hi, Hello (kept though stopped), Again
    QCOMPARE(second.messages[2].role, std::string("assistant"));
    QCOMPARE(second.messages[2].content, std::string("Hello"));
    QCOMPARE(s.title(), QStringLiteral("Hi"));
  }

  // A long first message titles the chat cut at a word's end with an ellipsis; the block
  // map's legend and the sidebar read "... in two senten" before.
  void aLongFirstMessageTitlesTheChatAtAWordsEnd() {
    ChatSession s(1, QStringLiteral("t"));
    s.beginUserTurn(QStringLiteral("Explain what a KV cache is in two sentences."));
    QCOMPARE(s.title(), QStringLiteral("Explain what a KV cache is in two\u2026"));
    ChatSession one_word(2, QStringLiteral("t"));
    one_word.beginUserTurn(QString(60, QLatin1Char('a')));
    QCOMPARE(one_word.title(), QString(39, QLatin1Char('a')) + QChar(0x2026));
    ChatSession exact(3, QStringLiteral("t"));
    exact.beginUserTurn(QStringLiteral("What is the capital of France? One word."));  // 40
    QCOMPARE(exact.title(), QStringLiteral("What is the capital of France? One word."));
  }

  void regenerateReplacesTheLastReplyWithANewSeed() {
    ChatSession s(1, QStringLiteral("t"));
    SamplingSettings fixed;
    fixed.params.seed = 100;
    s.setSampling(fixed);
    const ChatRequest first = s.beginUserTurn(QStringLiteral("Hi"));
    QVERIFY(!s.beginRegenerate().has_value());  // still generating
    s.appendReplyText(QStringLiteral("One"), 1);
    s.finishReply({1, FinishReason::EndOfGeneration, {}, 4, 1});
    const auto again = s.beginRegenerate();
    QVERIFY(again.has_value());
    QCOMPARE(s.items().size(), 2);
    QVERIFY(s.items().back().text.isEmpty());
    QCOMPARE(again->messages.size(), first.messages.size());
    QVERIFY(again->sampling.seed != first.sampling.seed);
  }

  void editLastTakesTheUserMessageBackAndDropsWhatFollows() {
    ChatSession s(1, QStringLiteral("t"));
    s.beginUserTurn(QStringLiteral("First"));
    s.finishReply({1, FinishReason::EndOfGeneration, {}, 1, 0});
    s.beginUserTurn(QStringLiteral("Second"));
    QVERIFY(!s.takeLastUserMessage().has_value());  // not while generating
    s.finishReply({1, FinishReason::Error, QStringLiteral("boom"), 0, 0});
    QCOMPARE(s.items().back().state, ChatItem::State::Failed);
    QCOMPARE(s.items().back().note, QStringLiteral("boom"));
    QCOMPARE(s.takeLastUserMessage().value_or(QString()), QStringLiteral("Second"));
    QCOMPARE(s.items().size(), 2);
    const ChatRequest resent = s.beginUserTurn(QStringLiteral("Second, edited"));
    QCOMPARE(resent.messages.back().content, std::string("Second, edited"));
    QCOMPARE(resent.messages.size(), 2u);  // First (the empty reply to it is left out)
  }

  void enterSendsShiftEnterAddsALineEscapeStops() {
    ChatInput input;
    QSignalSpy send(&input, &ChatInput::sendRequested);
    QSignalSpy stop(&input, &ChatInput::stopRequested);
    QTest::keyClicks(&input, QStringLiteral("ab"));
    QTest::keyClick(&input, Qt::Key_Return, Qt::ShiftModifier);
    QTest::keyClicks(&input, QStringLiteral("c"));
    QCOMPARE(input.toPlainText(), QStringLiteral("ab\nc"));
    QCOMPARE(send.count(), 0);
    QTest::keyClick(&input, Qt::Key_Return);
    QCOMPARE(send.count(), 1);
    QTest::keyClick(&input, Qt::Key_Escape);
    QCOMPARE(stop.count(), 1);
  }
};

}  // namespace kvscope::ui

QTEST_MAIN(kvscope::ui::ChatSessionTest)
#include "chat_session_test.moc"
