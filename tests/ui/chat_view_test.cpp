// ChatView with hostile replies: model output is untrusted text. No resource is ever loaded
// (an image of /dev/zero made the GUI thread read forever), raw HTML is shown as text, and a
// link opens only for http/https after the user confirms; other links are refused.
// A reasoning model's reply (Qwen 3: "<think>...</think>" then the answer) shows its
// reasoning in a "Thinking" section, collapsed until its header is clicked; the tags are never
// shown and the stored message keeps them.
#include <QApplication>
#include <QScrollBar>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTextBlock>
#include <QTextFragment>
#include <QtTest>

#include "chat/session.h"
#include "chat/view.h"
#include "window/app_palette.h"

namespace kvscope::ui {

namespace {

// Every image a rendered document refers to.
QStringList image_names(const QTextDocument& doc) {
  QStringList names;
  for (QTextBlock b = doc.begin(); b.isValid(); b = b.next()) {
    for (auto it = b.begin(); !it.atEnd(); ++it) {
      const QTextCharFormat f = it.fragment().charFormat();
      if (f.isImageFormat()) names << f.toImageFormat().name();
    }
  }
  return names;
}

void show_reply(ChatSession& session, const QString& text) {
  session.beginUserTurn(QStringLiteral("hi"));
  session.appendReplyText(text, 1);
  session.finishReply({session.id(), FinishReason::EndOfGeneration, {}, 1, 1});
}

const QString kReasoning = QStringLiteral("The user says hello. I should greet them back.");
const QString kQwenReply =
    QStringLiteral("<think>\n%1\n</think>\n\nHello! How can I help?").arg(kReasoning);

// `view` on screen (600 x 400) showing `session`; false when no window came up.
bool show_session(ChatView& view, ChatSession& session) {
  view.resize(600, 400);
  view.show();
  if (!QTest::qWaitForWindowExposed(&view)) return false;
  view.setSession(&session);
  return true;
}

// Clicks the view's "Thinking" header (the n-th one) as a user would.
bool click_thinking_header(ChatView& view, int n = 0) {
  QTextCursor at;
  for (int i = 0; i <= n; ++i) {
    at = view.document()->find(QStringLiteral("Thinking"), at);
    if (at.isNull()) return false;
  }
  at.setPosition(at.selectionStart() + 2);
  QTest::mouseClick(view.viewport(), Qt::LeftButton, {}, view.cursorRect(at).center());
  return true;
}

}  // namespace

class ChatViewTest : public QObject {
  Q_OBJECT

 private slots:
  void anImageInAReplyIsNeverLoaded() {
    QTemporaryDir dir;
    QImage png(4, 4, QImage::Format_RGB32);
    png.fill(Qt::red);
    const QString file = dir.filePath(QStringLiteral("x.png"));
    QVERIFY(png.save(file));
    const QUrl local = QUrl::fromLocalFile(file);

    ChatView view;
    QVERIFY(view.loadResource(QTextDocument::ImageResource, local).value<QImage>().isNull());
    QVERIFY(view.loadResource(QTextDocument::ImageResource, QUrl("file:///dev/zero"))
                .value<QImage>()
                .isNull());

    ChatSession session(1, QStringLiteral("t"));
    view.setSession(&session);
    show_reply(session, QStringLiteral("look ![a](%1) and ![b](/dev/zero)").arg(local.toString()));
    view.flush();
    const QStringList names = image_names(*view.document());
    QCOMPARE(names.size(), 2);
    for (const QString& name : names) {
      QVERIFY2(view.document()
                   ->resource(QTextDocument::ImageResource, QUrl(name))
                   .value<QImage>()
                   .isNull(),
               qPrintable(name));
    }
  }

  void rawHtmlInAReplyIsShownAsText() {
    ChatView view;
    ChatSession session(1, QStringLiteral("t"));
    view.setSession(&session);
    show_reply(session, QStringLiteral("<img src=\"/dev/zero\"> <b>bold</b>"));
    view.flush();
    QVERIFY(image_names(*view.document()).isEmpty());
    QVERIFY(view.toPlainText().contains(QStringLiteral("<b>bold</b>")));
  }

  void onlyWebLinksOpenAndOnlyAfterTheUserSaysYes() {
    QVERIFY(ChatView::isWebLink(QUrl("https://example.org/a")));
    QVERIFY(ChatView::isWebLink(QUrl("HTTP://example.org")));
    QVERIFY(!ChatView::isWebLink(QUrl("file:///etc/passwd")));
    QVERIFY(!ChatView::isWebLink(QUrl("/etc/passwd")));
    QVERIFY(!ChatView::isWebLink(QUrl("data:text/html,hi")));
    QVERIFY(!ChatView::isWebLink(QUrl("javascript:alert(1)")));
    QVERIFY(!ChatView::isWebLink(QUrl("http://")));

    ChatView view;
    ChatSession session(1, QStringLiteral("t"));
    view.setSession(&session);
    show_reply(session, QStringLiteral("[here](file:///etc/passwd)"));
    view.flush();
    const QString before = view.toPlainText();
    QList<QUrl> asked, opened;
    bool answer = false;
    view.setLinkHandlers([&](const QUrl& u) { return asked << u, answer; },
                         [&](const QUrl& u) { opened << u; });
    QSignalSpy refused(&view, &ChatView::linkRefused);

    emit view.anchorClicked(QUrl("file:///etc/passwd"));
    QCOMPARE(refused.size(), 1);
    QVERIFY(asked.isEmpty());
    QCOMPARE(view.toPlainText(), before);  // the chat is still there
    QVERIFY(view.source().isEmpty());

    emit view.anchorClicked(QUrl("https://example.org/"));
    QCOMPARE(asked.size(), 1);
    QVERIFY(opened.isEmpty());  // the user said no
    answer = true;
    emit view.anchorClicked(QUrl("https://example.org/"));
    QCOMPARE(opened, QList<QUrl>{QUrl("https://example.org/")});
  }

  void aThinkingReplyShowsOnlyItsAnswerUnderAClosedThinkingHeader() {
    ChatView view;
    ChatSession session(1, QStringLiteral("t"));
    view.setSession(&session);
    show_reply(session, kQwenReply);
    view.flush();
    const QString shown = view.toPlainText();
    QVERIFY2(shown.contains(QStringLiteral("\u25b6 Thinking\n")), qPrintable(shown));
    QVERIFY(shown.contains(QStringLiteral("Hello! How can I help?")));
    QVERIFY(!shown.contains(kReasoning));
    QVERIFY(!shown.contains(QStringLiteral("think>")));
    QVERIFY(!view.thinkingExpanded(1));
    QCOMPARE(session.items()[1].text, kQwenReply);  // only the display changes
  }

  void clickingTheThinkingHeaderShowsAndHidesTheReasoning() {
    ChatView view;
    ChatSession session(1, QStringLiteral("t"));
    QVERIFY(show_session(view, session));
    show_reply(session, kQwenReply);
    view.flush();
    QSignalSpy refused(&view, &ChatView::linkRefused);

    QVERIFY(click_thinking_header(view));
    QVERIFY(view.thinkingExpanded(1));
    QString shown = view.toPlainText();
    QVERIFY2(shown.contains(QStringLiteral("\u25bc Thinking\n") + kReasoning), qPrintable(shown));
    QVERIFY(shown.indexOf(kReasoning) < shown.indexOf(QStringLiteral("Hello! How")));
    QVERIFY(!shown.contains(QStringLiteral("think>")));

    QVERIFY(click_thinking_header(view));
    QVERIFY(!view.thinkingExpanded(1));
    QVERIFY(!view.toPlainText().contains(kReasoning));
    QVERIFY(refused.isEmpty());  // the view's own link, not one from the reply
  }

  void openingASectionKeepsItsHeaderWhereItWas() {
    ChatView view;
    view.resize(600, 300);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    ChatSession session(1, QStringLiteral("t"));
    view.setSession(&session);
    for (int i = 0; i < 20; ++i) show_reply(session, kQwenReply);
    view.flush();
    QScrollBar* bar = view.verticalScrollBar();
    QVERIFY(bar->maximum() > 0);
    QCOMPARE(bar->value(), bar->maximum());  // it followed the replies
    bar->setValue(bar->maximum() / 2);
    // The first header in the view's upper half.
    int n = 0;
    QTextCursor header;
    for (;; ++n) {
      header = view.document()->find(QStringLiteral("Thinking"), header);
      QVERIFY(!header.isNull());
      if (view.cursorRect(header).top() > 0) break;
    }
    const int top = view.cursorRect(header).top();
    QVERIFY(top < view.viewport()->height() / 2);
    QVERIFY(click_thinking_header(view, n));
    QVERIFY(view.thinkingExpanded(2 * n + 1));
    header = view.document()->find(QStringLiteral("Thinking"), 0);
    for (int i = 0; i < n; ++i) header = view.document()->find(QStringLiteral("Thinking"), header);
    QCOMPARE(view.cursorRect(header).top(), top);
    QVERIFY(bar->value() < bar->maximum());  // not pulled to the end
  }

  void whileStreamingItSaysThinkingUntilTheClosingTagThenTheAnswerFollows() {
    ChatView view;
    ChatSession session(1, QStringLiteral("t"));
    QVERIFY(show_session(view, session));
    session.beginUserTurn(QStringLiteral("hi"));
    session.appendReplyText(QStringLiteral("<think>\nThe user says"), 2);
    view.flush();
    QString shown = view.toPlainText();
    QVERIFY2(shown.contains(QStringLiteral("\u25b6 Thinking\u2026")), qPrintable(shown));
    QVERIFY(!shown.contains(QStringLiteral("The user says")));  // closed while streaming too

    QVERIFY(click_thinking_header(view));
    QVERIFY(view.toPlainText().contains(QStringLiteral("The user says \u258d")));
    session.appendReplyText(QStringLiteral(" hello.\n</th"), 5);
    view.flush();
    shown = view.toPlainText();
    QVERIFY2(!shown.contains(QStringLiteral("</th")), qPrintable(shown));
    QVERIFY(shown.contains(QStringLiteral("Thinking\u2026")));

    session.appendReplyText(QStringLiteral("ink>\n\nHel"), 7);
    view.flush();
    shown = view.toPlainText();
    QVERIFY2(shown.contains(QStringLiteral("\u25bc Thinking\n")), qPrintable(shown));
    QVERIFY(shown.contains(QStringLiteral("The user says hello.")));  // stays open
    QVERIFY(shown.contains(QStringLiteral("Hel \u258d")));

    session.finishReply({1, FinishReason::EndOfGeneration, {}, 3, 7});
    view.flush();
    QVERIFY(!view.toPlainText().contains(QStringLiteral("\u258d")));
  }

  void aRegeneratedReplyStartsClosed() {
    ChatView view;
    ChatSession session(1, QStringLiteral("t"));
    QVERIFY(show_session(view, session));
    show_reply(session, kQwenReply);
    view.flush();
    QVERIFY(click_thinking_header(view));
    QVERIFY(view.thinkingExpanded(1));
    QTest::qWait(2);  // the new reply is told apart by when it was added
    QVERIFY(session.beginRegenerate().has_value());
    session.appendReplyText(QStringLiteral("<think>\nAgain"), 2);
    view.flush();
    QVERIFY(!view.thinkingExpanded(1));
    QVERIFY(!view.toPlainText().contains(QStringLiteral("Again")));
  }

  void anEmptyThinkingSectionIsNotShown() {
    ChatView view;
    ChatSession session(1, QStringLiteral("t"));
    view.setSession(&session);
    show_reply(session, QStringLiteral("<think>\n\n</think>\n\nHello!"));
    view.flush();
    const QString shown = view.toPlainText();
    QVERIFY2(!shown.contains(QStringLiteral("Thinking")), qPrintable(shown));
    QVERIFY(!shown.contains(QStringLiteral("think>")));
    QVERIFY(shown.endsWith(QStringLiteral("Assistant\nHello!")));
  }

  // KVSCOPE_SHOTS_DIR=dir: PNGs of a Qwen 3 style chat in both palettes (run under Xvfb):
  // chat-thinking-streaming (the model still thinking, closed), -closed (reply done) and
  // -open (its header clicked).
  void screenshots() {
    const QString dir = qEnvironmentVariable("KVSCOPE_SHOTS_DIR");
    if (dir.isEmpty()) QSKIP("set KVSCOPE_SHOTS_DIR to save screenshots");
    const QString reasoning = QStringLiteral(
        "Okay, the user wants to know how much memory the KV cache of an 8B model needs for "
        "a 32k context. Llama 3 8B has 32 layers, 8 KV heads and a head dim of 128.\n\n"
        "Per token: 2 (K and V) \u00d7 32 \u00d7 8 \u00d7 128 \u00d7 2 bytes = 131072 bytes, "
        "so 128 KiB.\n\nFor 32768 tokens that is 4 GiB. I should give the formula too.");
    const QString answer = QStringLiteral(
        "About **4 GiB** in fp16.\n\nEach token stores K and V for every layer:\n\n"
        "- 2 \u00d7 32 layers \u00d7 8 KV heads \u00d7 128 \u00d7 2 bytes = 128 KiB\n"
        "- 128 KiB \u00d7 32768 tokens = 4 GiB");
    const QString reply = QStringLiteral("<think>\n%1\n</think>\n\n%2").arg(reasoning, answer);
    const QString question =
        QStringLiteral("How much KV cache does Llama 3 8B need for a 32k context?");
    for (const bool dark : {false, true}) {
      QApplication::setPalette(dark ? dark_palette() : light_palette());
      const QString suffix = dark ? QStringLiteral("-dark.png") : QStringLiteral("-light.png");
      ChatView view;
      view.resize(760, 560);
      view.show();
      QVERIFY(QTest::qWaitForWindowExposed(&view));
      ChatSession session(1, QStringLiteral("t"));
      view.setSession(&session);
      session.beginUserTurn(question);
      session.appendReplyText(QStringLiteral("<think>\n") + reasoning.left(120), 30);
      view.flush();
      QVERIFY(view.grab().save(dir + QStringLiteral("/chat-thinking-streaming") + suffix));
      session.appendReplyText(reply.mid(QStringLiteral("<think>\n").size() + 120), 140);
      session.finishReply({1, FinishReason::EndOfGeneration, {}, 30, 140});
      view.flush();
      QVERIFY(view.grab().save(dir + QStringLiteral("/chat-thinking-closed") + suffix));
      QVERIFY(click_thinking_header(view));
      QVERIFY(view.grab().save(dir + QStringLiteral("/chat-thinking-open") + suffix));
    }
  }
};

}  // namespace kvscope::ui

QTEST_MAIN(kvscope::ui::ChatViewTest)
#include "chat_view_test.moc"
