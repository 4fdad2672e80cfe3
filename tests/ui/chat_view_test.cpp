// ChatView with hostile replies: model output is untrusted text. No resource is ever loaded
// (an image of /dev/zero made the GUI thread read forever), raw HTML is shown as text, and a
// link opens only for http/https after the user confirms; other links are refused.
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTextBlock>
#include <QTextFragment>
#include <QtTest>

#include "chat/session.h"
#include "chat/view.h"

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
};

}  // namespace kvscope::ui

QTEST_MAIN(kvscope::ui::ChatViewTest)
#include "chat_view_test.moc"
