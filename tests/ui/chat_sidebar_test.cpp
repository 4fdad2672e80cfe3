// The chat sidebar on the real window with saved chats (a scratch database): chats are
// saved as they change and listed again by a new window; a rename in the list is saved; a
// delete goes from the database at once and Undo brings the chat back (saved again); the
// search keeps chats whose title or messages hold the text. No model needed: the turns are
// fed to the sessions as the worker would.
#include <QListWidget>
#include <QPushButton>
#include <QtTest>

#include <memory>

#include "chat/chat_controller.h"
#include "chat/chat_store.h"
#include "chat/session.h"
#include "chat/sidebar.h"
#include "ui_test_support.h"
#include "window/main_window.h"

namespace kvscope::ui {
namespace {

void add_turn(ChatSession* s, const QString& user, const QString& reply) {
  s->beginUserTurn(user);
  s->appendReplyText(reply, 5);
  s->finishReply({s->id(), FinishReason::EndOfGeneration, {}, 7, 5});
}

}  // namespace

class ChatSidebarTest : public QObject {
  Q_OBJECT

 private:
  QString db_;

  std::unique_ptr<MainWindow> make_window() {
    AppConfig config;
    config.demo_folder = test::scratch_dir();
    config.chats_path = db_;
    auto w = std::make_unique<MainWindow>(config);
    w->show();
    return w;
  }

  static ChatSession* by_title(MainWindow& w, const QString& title) {
    for (ChatSession* s : w.chats()->sessions()) {
      if (s->title() == title) return s;
    }
    return nullptr;
  }

 private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    db_ = test::scratch_dir() + QStringLiteral("/chats.sqlite");
  }

  void chatsAreSavedAndListedByTheNextWindow() {
    {
      auto w = make_window();
      QVERIFY2(w->chats()->store(), qPrintable(w->noticeText()));
      add_turn(w->chats()->currentSession(), QStringLiteral("About foxes"),
               QStringLiteral("A red fox."));
      add_turn(w->chats()->newChat(), QStringLiteral("About owls"),
               QStringLiteral("Owls hoot at night."));
      w->chats()->newChat();  // left empty: not saved
    }
    auto w = make_window();
    QCOMPARE(w->chats()->sessions().size(), 3);  // two saved, one new
    ChatSession* owls = by_title(*w, QStringLiteral("About owls"));
    QVERIFY(owls);
    QCOMPARE(owls->items().size(), 2);
    QCOMPARE(owls->items()[1].text, QStringLiteral("Owls hoot at night."));
    QCOMPARE(w->chatSidebar()->list()->count(), 3);
  }

  void aRenameInTheListIsSaved() {
    {
      auto w = make_window();
      ChatSession* owls = by_title(*w, QStringLiteral("About owls"));
      QVERIFY(owls);
      QListWidget* list = w->chatSidebar()->list();
      for (int i = 0; i < list->count(); ++i) {
        if (list->item(i)->text() == owls->title()) list->item(i)->setText(QStringLiteral("Owls"));
      }
      QCOMPARE(owls->title(), QStringLiteral("Owls"));
    }
    auto w = make_window();
    QVERIFY(by_title(*w, QStringLiteral("Owls")));
  }

  void searchKeepsChatsWhoseTitleOrMessagesHoldTheText() {
    auto w = make_window();
    ChatSession* foxes = by_title(*w, QStringLiteral("About foxes"));
    ChatSession* owls = by_title(*w, QStringLiteral("Owls"));
    QVERIFY(foxes && owls);
    ChatSidebar* bar = w->chatSidebar();
    bar->setSearchText(QStringLiteral("HOOT"));  // in a reply, any case
    QVERIFY(bar->visibleChats().contains(owls->id()));
    QVERIFY(!bar->visibleChats().contains(foxes->id()));
    QVERIFY(
        bar->visibleChats().contains(w->chats()->currentSession()->id()));  // the open one stays
    bar->setSearchText(QStringLiteral("fox"));
    QVERIFY(bar->visibleChats().contains(foxes->id()));
    QVERIFY(!bar->visibleChats().contains(owls->id()));
    bar->setSearchText({});
    QCOMPARE(bar->visibleChats().size(), 3);
  }

  void deleteGoesAtOnceAndUndoBringsTheChatBack() {
    auto w = make_window();
    ChatSession* foxes = by_title(*w, QStringLiteral("About foxes"));
    QVERIFY(foxes);
    const ChatId id = foxes->id();
    w->chats()->selectChat(id);
    QPushButton* del = nullptr;
    for (QPushButton* b : w->chatSidebar()->findChildren<QPushButton*>()) {
      if (b->text() == QLatin1String("Delete")) del = b;
    }
    QVERIFY(del);
    del->click();
    QVERIFY(!w->chats()->store()->contains(id));
    QVERIFY(!by_title(*w, QStringLiteral("About foxes")));
    QPushButton* undo = w->chatSidebar()->undoButton();
    QVERIFY(undo->isVisible());
    QVERIFY2(undo->text().contains(QStringLiteral("About foxes")), qPrintable(undo->text()));
    undo->click();
    QVERIFY(!undo->isVisible());
    QVERIFY(w->chats()->store()->contains(id));
    QCOMPARE(w->chats()->currentSession()->id(), id);
    QCOMPARE(w->chats()->currentSession()->items().size(), 2);
    // Deleted for good: gone from the next window.
    w->chats()->selectChat(id);
    del->click();
    w.reset();
    auto again = make_window();
    QVERIFY(!by_title(*again, QStringLiteral("About foxes")));
    QVERIFY(by_title(*again, QStringLiteral("Owls")));
  }
};

}  // namespace kvscope::ui

QTEST_MAIN(kvscope::ui::ChatSidebarTest)
#include "chat_sidebar_test.moc"
