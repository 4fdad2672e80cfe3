// #38 item 1: nothing a user saved is lost. With each database the app must not write into
// (a chat this version cannot read, a newer version's schema, a read-only file, a read-only
// folder), the window starts, a new chat is made, a message sent and answered (stories260K),
// and the window closes: the old rows are byte-identical (a SHA-256 over every row and
// column), the new chat took an id past every stored one, and the chats that were there are
// listed (the unreadable one greyed, with its reason; a read-only store says so).
//
// Permissions: as root, a mode does not stop a write; the window then runs with the file
// system identity of "nobody" (setfsuid, the thread that runs it and the threads it starts),
// so the modes bind as they do for a user.
#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QLabel>
#include <QListWidget>
#include <QSignalSpy>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QSqlRecord>
#include <QTemporaryDir>
#include <QtTest>

#include <sys/fsuid.h>
#include <unistd.h>

#include <optional>

#include "chat/chat_controller.h"
#include "chat/chat_store.h"
#include "chat/session.h"
#include "chat/sidebar.h"
#include "ui_test_support.h"
#include "window/main_window.h"

namespace kvscope::ui {
namespace {

constexpr uid_t kNobody = 65534;

// Runs `sql` on the test's own connection (created here with the store's own layout).
bool run_sql(const QString& path, const QStringList& sql) {
  bool ok = true;
  {
    QSqlDatabase d = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), QStringLiteral("raw"));
    d.setDatabaseName(path);
    ok = d.open();
    QSqlQuery q(d);
    for (const QString& s : sql) {
      if (ok && !q.exec(s)) {
        qWarning("%s: %s", qPrintable(s), qPrintable(q.lastError().text()));
        ok = false;
      }
    }
    d.close();
  }
  QSqlDatabase::removeDatabase(QStringLiteral("raw"));
  return ok;
}

// Every row and column of the chats with id <= `last` and of their messages, hashed in
// order; nullopt when the database cannot be read. Not a read-only connection: that one
// would leave the -wal and -shm files behind, and a read-only folder would then not be one.
std::optional<QByteArray> rows_sha256(const QString& path, ChatId last) {
  std::optional<QByteArray> digest;
  {
    QSqlDatabase d = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), QStringLiteral("dump"));
    d.setDatabaseName(path);
    QCryptographicHash hash(QCryptographicHash::Sha256);
    bool ok = d.open();
    for (const char* sql : {"SELECT * FROM chats WHERE id <= %1 ORDER BY id",
                            "SELECT * FROM messages WHERE chat_id <= %1 ORDER BY chat_id, "
                            "position"}) {
      QSqlQuery q(d);
      ok = ok && q.exec(QString::fromLatin1(sql).arg(last));
      while (ok && q.next()) {
        for (int i = 0; i < q.record().count(); ++i) {
          hash.addData(q.record().fieldName(i).toUtf8() + '=' + q.value(i).toString().toUtf8() +
                       '\x1f');
        }
        hash.addData(QByteArrayView("\x1e"));
      }
    }
    if (ok) digest = hash.result();
    d.close();
  }
  QSqlDatabase::removeDatabase(QStringLiteral("dump"));
  return digest;
}

QByteArray file_bytes(const QString& path) {
  QFile f(path);
  return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

// The file system identity of an unprivileged user while it lives (root only; others are
// bound by the modes already). Threads started meanwhile inherit it.
class Unprivileged {
 public:
  Unprivileged() {
    if (geteuid() == 0) {
      setfsuid(kNobody);
      setfsgid(kNobody);
      active_ = true;
    }
  }
  ~Unprivileged() {
    if (active_) {
      setfsuid(0);
      setfsgid(0);
    }
  }
  Unprivileged(const Unprivileged&) = delete;
  Unprivileged& operator=(const Unprivileged&) = delete;

 private:
  bool active_ = false;
};

enum class Case { UnreadableChat, NewerSchema, ReadOnlyFile, ReadOnlyFolder };

}  // namespace

class ChatStoreSafetyTest : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir root_;
  QString demo_folder_;
  int count_ = 0;

  // A folder every user can enter (the scratch root is the test's own, mode 0700).
  QString open_folder() {
    const QString dir = root_.filePath(QString::number(++count_));
    QDir().mkpath(dir);
    QFile::setPermissions(root_.path(), QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner |
                                            QFile::ReadOther | QFile::ExeOther | QFile::ReadGroup |
                                            QFile::ExeGroup);
    return dir;
  }

  // Chats 1 and 3, each a turn and its reply, saved by the store itself (schema 2, WAL).
  static bool write_chats(const QString& path) {
    QString error;
    auto store = ChatStore::open(path, &error);
    if (!store) {
      qWarning("%s", qPrintable(error));
      return false;
    }
    for (const ChatId id : {1, 3}) {
      ChatSession s(id, QStringLiteral("Saved chat %1").arg(id));
      s.beginUserTurn(QStringLiteral("Question %1").arg(id));
      s.replyStarted(4);
      s.appendReplyText(QStringLiteral("Answer %1").arg(id), 2);
      s.finishReply({id, FinishReason::EndOfGeneration, {}, 4, 2});
      if (!store->save(s, &error)) {
        qWarning("%s", qPrintable(error));
        return false;
      }
    }
    return true;
  }

  // Builds the case's database in `dir`; returns its path, the highest id stored.
  static QString make_case(Case c, const QString& dir, ChatId* last) {
    const QString path = dir + QStringLiteral("/chats.sqlite");
    if (!write_chats(path)) return {};
    *last = 3;
    const auto all = QFile::Permissions::fromInt(0x7777);
    const auto read_write = QFile::Permissions::fromInt(0x6666);
    const auto read_only = QFile::Permissions::fromInt(0x4444);
    const auto read_and_enter = QFile::Permissions::fromInt(0x5555);
    switch (c) {
      case Case::UnreadableChat:  // the highest id, so a new chat computed from the rest takes it
        *last = 5;
        if (!run_sql(path, {"INSERT INTO chats(id, title, system_prompt, sampling, created_ms, "
                            "updated_ms) VALUES(5, 'Tool chat', '', '{}', 0, 0)",
                            "INSERT INTO messages(chat_id, position, role, text, state, note, "
                            "created_ms) VALUES(5, 0, 'tool', '{\"weather\": \"sunny\"}', "
                            "'done', '', 0)"})) {
          return {};
        }
        break;
      case Case::NewerSchema:  // a rollback-journal file, as a newer version might keep it
        if (!run_sql(path, {"PRAGMA journal_mode=DELETE",
                            "ALTER TABLE chats ADD COLUMN pinned INTEGER NOT NULL DEFAULT 0",
                            "PRAGMA user_version=3"})) {
          return {};
        }
        break;
      case Case::ReadOnlyFile:
      case Case::ReadOnlyFolder:
        break;
    }
    QFile::setPermissions(path, c == Case::ReadOnlyFile ? read_only : read_write);
    QFile::setPermissions(dir, c == Case::ReadOnlyFolder ? read_and_enter : all);
    return path;
  }

 private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QVERIFY(root_.isValid());
    demo_folder_ = open_folder();
    QFile::setPermissions(demo_folder_, QFile::Permissions::fromInt(0x7777));
  }

  void nothingStoredIsWrittenAndNewChatsTakeNewIds_data() {
    QTest::addColumn<int>("which");
    QTest::newRow("a chat this version cannot read") << int(Case::UnreadableChat);
    QTest::newRow("a newer schema") << int(Case::NewerSchema);
    QTest::newRow("a read-only file") << int(Case::ReadOnlyFile);
    QTest::newRow("a read-only folder") << int(Case::ReadOnlyFolder);
  }

  void nothingStoredIsWrittenAndNewChatsTakeNewIds() {
    KVSCOPE_QT_REQUIRE_SHARED(stories, "models/stories260K.gguf");
    QFETCH(int, which);
    const Case c = Case(which);
    const QString dir = open_folder();
    ChatId last = 0;
    const QString path = make_case(c, dir, &last);
    QVERIFY(!path.isEmpty());
    const std::optional<QByteArray> before = rows_sha256(path, last);
    QVERIFY(before);
    const QByteArray bytes_before = file_bytes(path);
    const bool writable = c == Case::UnreadableChat;

    ChatId new_chat = 0;
    {
      Unprivileged as_a_user;
      AppConfig config;
      config.demo_folder = demo_folder_;
      config.chats_path = path;
      MainWindow w(config);
      w.show();
      QVERIFY2(w.chats()->store(), qPrintable(w.noticeText()));
      QCOMPARE(w.chats()->store()->readOnly(), !writable);
      // The stored chats are listed: 1 and 3 as chats, 5 greyed with its reason.
      const ChatSidebar* sidebar = w.findChild<ChatSidebar*>();
      QVERIFY(sidebar);
      QVERIFY(w.chats()->session(1) && w.chats()->session(3));
      QCOMPARE(w.chats()->session(3)->items().size(), 2);
      if (c == Case::UnreadableChat) {
        QVERIFY(sidebar->isUnreadable(5));
        QVERIFY2(w.noticeText().contains(QStringLiteral("tool")), qPrintable(w.noticeText()));
      } else {
        QVERIFY(sidebar->readOnlyLabel()->isVisibleTo(&w));
        QVERIFY2(w.noticeText().contains(QStringLiteral("read-only")), qPrintable(w.noticeText()));
      }
      QVERIFY(test::load_model(w, stories));
      ChatSession* s = w.chats()->newChat();
      SamplingSettings sampling = s->sampling();
      sampling.max_tokens = 8;
      s->setSampling(sampling);
      new_chat = s->id();
      QSignalSpy finished(w.chats(), &ChatController::replyFinished);
      w.chats()->sendMessage(QStringLiteral("Once upon a time"));
      QVERIFY(finished.wait(60000));
      QCOMPARE(s->items().size(), 2);
    }
    QVERIFY2(new_chat > last, qPrintable(QString::number(new_chat)));
    QCOMPARE(rows_sha256(path, last), before);
    if (!writable) QCOMPARE(file_bytes(path), bytes_before);
    if (c == Case::NewerSchema) QVERIFY(!QFileInfo::exists(path + QStringLiteral("-wal")));
    if (writable) {  // the new chat was saved under its own id, beside the old rows
      QSqlDatabase d = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), QStringLiteral("n"));
      d.setDatabaseName(path);
      QVERIFY(d.open());
      QSqlQuery q(d);
      QVERIFY(
          q.exec(
              QStringLiteral("SELECT count(*) FROM messages WHERE chat_id = %1").arg(new_chat)) &&
          q.next());
      QCOMPARE(q.value(0).toInt(), 2);
      q.finish();
      d.close();
    }
    QSqlDatabase::removeDatabase(QStringLiteral("n"));
  }
};

}  // namespace kvscope::ui

QTEST_MAIN(kvscope::ui::ChatStoreSafetyTest)
#include "chat_store_safety_test.moc"
