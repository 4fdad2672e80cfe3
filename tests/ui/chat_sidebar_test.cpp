// The chat sidebar on the real window with saved chats (a scratch database): chats are
// saved as they change and listed again by a new window; a rename in the list is saved; a
// delete goes from the database at once and Undo brings the chat back (saved again); the
// search keeps chats whose title or messages hold the text. No model needed: the turns are
// fed to the sessions as the worker would.
#include <QListWidget>
#include <QPushButton>
#include <QSqlDatabase>
#include <QSqlQuery>
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

// The rows of chat `id` (its chats row and its messages) as one text, read on a connection of
// the test's own; "" when `sql` (statements run first, before the read) fails.
QString chat_rows(const QString& path, qint64 id, const QStringList& sql = {}) {
  QString rows;
  {
    QSqlDatabase d = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), QStringLiteral("raw"));
    d.setDatabaseName(path);
    if (d.open()) {
      QSqlQuery q(d);
      bool ok = true;
      for (const QString& statement : sql) ok = ok && q.exec(statement);
      ok = ok && q.exec(QStringLiteral("SELECT c.title, c.sampling, m.position, m.role, m.text "
                                       "FROM chats c LEFT JOIN messages m ON m.chat_id = c.id "
                                       "WHERE c.id = %1 ORDER BY m.position")
                            .arg(id));
      while (ok && q.next()) {
        for (int i = 0; i < 5; ++i) rows += q.value(i).toString() + QLatin1Char('|');
        rows += QLatin1Char('\n');
      }
    }
    d.close();
  }
  QSqlDatabase::removeDatabase(QStringLiteral("raw"));
  return rows;
}

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

  // A saved chat this version cannot read (here an unknown role) is listed greyed, not
  // loaded; the new chats take ids past it, so its rows are never overwritten (they were, when ids
  // were counted from the chats that loaded), and it cannot be saved over or deleted.
  void aChatThisVersionCannotReadKeepsItsRowsAndItsId() {
    const QString path = test::scratch_dir() + QStringLiteral("/unreadable.sqlite");
    {
      QString open_error;
      auto store = ChatStore::open(path, &open_error);
      QVERIFY2(store, qPrintable(open_error));
      ChatSession good(1, QStringLiteral("good"));
      add_turn(&good, QStringLiteral("Hi"), QStringLiteral("Hello."));
      QString error;
      QVERIFY(store->save(good, &error));
    }
    const QString before =
        chat_rows(path, 2,
                  {"INSERT INTO chats(id, title, system_prompt, sampling, created_ms, updated_ms) "
                   "VALUES(2, 'from a newer version', '', '{}', 0, 0)",
                   "INSERT INTO messages(chat_id, position, role, text, state, note, created_ms) "
                   "VALUES(2, 0, 'tool', 'a result', 'done', '', 0)"});
    QVERIFY(before.contains(QStringLiteral("a result")));

    AppConfig config;
    config.demo_folder = test::scratch_dir();
    config.chats_path = path;
    {
      MainWindow w(config);
      const ChatSidebar* sidebar = w.findChild<ChatSidebar*>();
      QVERIFY(sidebar && sidebar->isUnreadable(2));
      QVERIFY(!w.chats()->session(2));
      // The window opens on a new, empty chat: the one a user types into first.
      ChatSession* fresh = w.chats()->currentSession();
      QVERIFY(fresh->items().isEmpty());
      QVERIFY2(fresh->id() > 2, qPrintable(QString::number(fresh->id())));
      add_turn(fresh, QStringLiteral("New question"), QStringLiteral("New answer."));
      QVERIFY(w.chats()->store()->contains(fresh->id()));
      ChatSession impostor(2, QStringLiteral("impostor"));
      add_turn(&impostor, QStringLiteral("x"), QStringLiteral("y"));
      QString error;
      QVERIFY(!w.chats()->store()->save(impostor, &error));
      QVERIFY2(error.contains(QStringLiteral("2")), qPrintable(error));
      QVERIFY(!w.chats()->store()->remove(2, &error));
    }
    QCOMPARE(chat_rows(path, 2), before);
  }
};

}  // namespace kvscope::ui

QTEST_MAIN(kvscope::ui::ChatSidebarTest)
#include "chat_sidebar_test.moc"
