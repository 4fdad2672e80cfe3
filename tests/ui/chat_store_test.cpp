// ChatStore (chat_store.h): chats saved to SQLite come back field for field; a reply still
// streaming is never written; a v1 database written by hand is upgraded in place; a newer
// schema, a file that is no database and a chat with an unknown role are reported without
// losing anything else. Every database lives in a scratch folder. No model needed.
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSqlDatabase>
#include <QSqlQuery>
#include <QtTest>

#include <memory>
#include <vector>

#include "chat/chat_store.h"
#include "chat/session.h"
#include "ui_test_support.h"

namespace kvscope::ui {
namespace {

// Runs `sql` on a plain Qt SQL connection of the test's own (not the store's).
void run_sql(const QString& path, const QStringList& sql) {
  {
    QSqlDatabase d = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), QStringLiteral("raw"));
    d.setDatabaseName(path);
    QVERIFY(d.open());
    QSqlQuery q(d);
    for (const QString& s : sql) QVERIFY2(q.exec(s), qPrintable(s));
    d.close();
  }
  QSqlDatabase::removeDatabase(QStringLiteral("raw"));
}

QVariant sql_value(const QString& path, const QString& sql) {
  QVariant v;
  {
    QSqlDatabase d = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), QStringLiteral("raw"));
    d.setDatabaseName(path);
    if (d.open()) {
      QSqlQuery q(d);
      if (q.exec(sql) && q.next()) v = q.value(0);
    }
    d.close();
  }
  QSqlDatabase::removeDatabase(QStringLiteral("raw"));
  return v;
}

// The layout of schema version 1, as chat_store.h describes it.
const QStringList kV1 = {
    "CREATE TABLE chats(id INTEGER PRIMARY KEY, title TEXT NOT NULL, system_prompt TEXT NOT "
    "NULL, sampling TEXT NOT NULL, created_ms INTEGER NOT NULL, updated_ms INTEGER NOT NULL)",
    "CREATE TABLE messages(chat_id INTEGER NOT NULL REFERENCES chats(id) ON DELETE CASCADE, "
    "position INTEGER NOT NULL, role TEXT NOT NULL, text TEXT NOT NULL, state TEXT NOT NULL, "
    "note TEXT NOT NULL, created_ms INTEGER NOT NULL, PRIMARY KEY(chat_id, position))",
    "PRAGMA user_version=1"};

QString db_path() {
  return test::scratch_dir() + QStringLiteral("/chats.sqlite");
}

std::unique_ptr<ChatStore> open_store(const QString& path) {
  QString error;
  auto store = ChatStore::open(path, &error);
  if (!store) qWarning("%s", qPrintable(error));
  return store;
}

}  // namespace

class ChatStoreTest : public QObject {
  Q_OBJECT

 private slots:
  void everyFieldComesBackAfterReopening() {
    const QString path = db_path();
    ChatSession s(7, QStringLiteral("Chat 7"));
    s.setSystemPrompt(QStringLiteral("Answer in one line. \u7b54\u3048"));
    SamplingSettings sampling;
    sampling.params.temperature = 0.25f;
    sampling.params.top_k = 12;
    sampling.params.seed = 18446744073709551557ull;  // needs all 64 bits
    sampling.max_tokens = 99;
    s.setSampling(sampling);
    s.setModel({QStringLiteral("/m/a.gguf"), QStringLiteral("a.gguf"), 1234, 5678});
    s.beginUserTurn(QStringLiteral("Hi \U0001F98A"));
    s.replyStarted(11);
    s.appendReplyText(QStringLiteral("Hel"), 1);
    s.appendReplyText(QStringLiteral("lo"), 3);
    s.finishReply({7, FinishReason::EndOfGeneration, {}, 11, 3});
    s.setTitle(QStringLiteral("Greetings"));
    {
      auto store = open_store(path);
      QVERIFY(store);
      QString error;
      QVERIFY2(store->save(s, &error), qPrintable(error));
    }
    auto store = open_store(path);
    QVERIFY(store);
    QCOMPARE(sql_value(path, "PRAGMA journal_mode").toString(), QStringLiteral("wal"));
    QStringList problems;
    QObject owner;
    const auto chats = store->load(&owner, &problems);
    QVERIFY2(problems.isEmpty(), qPrintable(problems.join('\n')));
    QCOMPARE(chats.size(), 1u);
    const ChatSession& r = *chats[0];
    QCOMPARE(r.id(), 7);
    QCOMPARE(r.title(), QStringLiteral("Greetings"));
    QCOMPARE(r.systemPrompt(), s.systemPrompt());
    QCOMPARE(r.sampling().params.temperature, 0.25f);
    QCOMPARE(r.sampling().params.top_k, 12);
    QCOMPARE(r.sampling().params.seed, sampling.params.seed);
    QCOMPARE(r.sampling().max_tokens, 99);
    QCOMPARE(r.model().path, QStringLiteral("/m/a.gguf"));
    QCOMPARE(r.model().size, 1234);
    QCOMPARE(r.model().mtime_ms, 5678);
    QCOMPARE(r.createdMs(), s.createdMs());
    QCOMPARE(r.items().size(), 2);
    QCOMPARE(r.items()[0].text, QStringLiteral("Hi \U0001F98A"));
    const ChatItem& reply = r.items()[1];
    QCOMPARE(reply.text, QStringLiteral("Hello"));
    QCOMPARE(reply.state, ChatItem::State::Done);
    QCOMPARE(reply.prompt_tokens, 11);
    QCOMPARE(reply.tokens, 3);
    QCOMPARE(reply.finish_reason, QStringLiteral("end of generation"));
    QCOMPARE(reply.created_ms, s.items()[1].created_ms);
    QVERIFY(store->contains(7));
  }

  void aReplyStillStreamingIsNotSavedTheTurnBeforeItIs() {
    const QString path = db_path();
    auto store = open_store(path);
    QVERIFY(store);
    ChatSession s(1, QStringLiteral("t"));
    s.beginUserTurn(QStringLiteral("First"));
    s.appendReplyText(QStringLiteral("Done"), 1);
    s.finishReply({1, FinishReason::Length, {}, 2, 1});
    s.beginUserTurn(QStringLiteral("Second"));
    s.appendReplyText(QStringLiteral("half a rep"), 4);
    QString error;
    QVERIFY2(store->save(s, &error), qPrintable(error));
    QCOMPARE(sql_value(path, "SELECT count(*) FROM messages").toInt(), 3);
    QCOMPARE(sql_value(path, "SELECT text FROM messages WHERE position = 2").toString(),
             QStringLiteral("Second"));
    QCOMPARE(sql_value(path, "SELECT finish_reason FROM messages WHERE position = 1").toString(),
             QStringLiteral("length"));
  }

  void aVersion1DatabaseIsUpgradedInPlace() {
    const QString path = db_path();
    run_sql(path, kV1);
    run_sql(path, {"INSERT INTO chats VALUES(4, 'Old chat', 'Be kind.', "
                   "'{\"temperature\":0.5,\"seed\":\"9\"}', 100, 200)",
                   "INSERT INTO messages VALUES(4, 0, 'user', 'Hello', 'done', '', 150)",
                   "INSERT INTO messages VALUES(4, 1, 'assistant', 'Hi there', 'stopped', "
                   "'stopped', 160)"});
    auto store = open_store(path);
    QVERIFY(store);
    QCOMPARE(sql_value(path, "PRAGMA user_version").toInt(), ChatStore::kSchemaVersion);
    QCOMPARE(sql_value(path, "SELECT model_size FROM chats").toInt(), -1);
    QCOMPARE(sql_value(path, "SELECT tokens FROM messages WHERE position = 1").toInt(), 0);
    QStringList problems;
    QObject owner;
    const auto chats = store->load(&owner, &problems);
    QVERIFY2(problems.isEmpty(), qPrintable(problems.join('\n')));
    QCOMPARE(chats.size(), 1u);
    ChatSession& s = *chats[0];
    QCOMPARE(s.title(), QStringLiteral("Old chat"));
    QCOMPARE(s.sampling().params.temperature, 0.5f);
    QCOMPARE(s.sampling().params.seed, 9u);
    QCOMPARE(s.sampling().max_tokens, SamplingSettings{}.max_tokens);  // not in v1's JSON
    QVERIFY(!s.model().isSet());
    QCOMPARE(s.items().size(), 2);
    QCOMPARE(s.items()[1].state, ChatItem::State::Stopped);
    QCOMPARE(s.items()[1].created_ms, 160);
    // The upgraded database takes the new fields.
    s.setModel({QStringLiteral("/m/b.gguf"), QStringLiteral("b.gguf"), 10, 20});
    QCOMPARE(sql_value(path, "SELECT model_name FROM chats WHERE id = 4").toString(),
             QString());  // setModel alone does not save: the window's save_chat does
    QString error;
    QVERIFY2(store->save(s, &error), qPrintable(error));
    QCOMPARE(sql_value(path, "SELECT model_name FROM chats WHERE id = 4").toString(),
             QStringLiteral("b.gguf"));
    QCOMPARE(sql_value(path, "SELECT count(*) FROM messages").toInt(), 2);
  }

  void aNewerSchemaIsOpenedReadOnlyAndLeftAsItIs() {
    const QString path = db_path();
    run_sql(path, kV1);
    run_sql(path, {"INSERT INTO chats VALUES(4, 'Old chat', '', '{}', 100, 200)",
                   "INSERT INTO messages VALUES(4, 0, 'user', 'Hello', 'done', '', 150)",
                   "PRAGMA user_version=99"});
    QFile file(path);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QByteArray before = file.readAll();  // a rollback-journal database
    file.close();
    QString error;
    auto store = ChatStore::open(path, &error);
    QVERIFY2(store, qPrintable(error));
    QVERIFY(store->readOnly());
    QVERIFY2(store->readOnlyReason().contains(QStringLiteral("newer")) &&
                 store->readOnlyReason().contains(QStringLiteral("99")),
             qPrintable(store->readOnlyReason()));
    QStringList problems;
    QObject owner;
    const auto chats = store->load(&owner, &problems);  // its columns are ones this version knows
    QVERIFY2(problems.isEmpty(), qPrintable(problems.join('\n')));
    QCOMPARE(chats.size(), 1u);
    QCOMPARE(chats[0]->items().size(), 1);
    QCOMPARE(store->next_id(), 5);
    ChatSession fresh(5, QStringLiteral("new"));
    fresh.beginUserTurn(QStringLiteral("Hi"));
    QVERIFY(!store->save(fresh, &error));
    QVERIFY2(error.contains(QStringLiteral("read-only")), qPrintable(error));
    QVERIFY(!store->remove(4, &error));
    store.reset();
    QVERIFY(file.open(QIODevice::ReadOnly));
    QCOMPARE(file.readAll(), before);  // byte for byte: not even switched to WAL
    file.close();
    QVERIFY(!QFileInfo::exists(path + QStringLiteral("-wal")));
    QCOMPARE(sql_value(path, "PRAGMA user_version").toInt(), 99);
  }

  // A newer version that renamed the columns: its chats are listed by id and title, unread,
  // and each exports every stored column.
  void aNewerLayoutIsListedAndExportsItsRowsAsStored() {
    const QString path = db_path();
    run_sql(path, {"CREATE TABLE chats(id INTEGER PRIMARY KEY, title TEXT, folder TEXT, "
                   "icon BLOB)",
                   "CREATE TABLE messages(chat_id INTEGER, position INTEGER, author TEXT, "
                   "parts TEXT)",
                   "INSERT INTO chats VALUES(9, 'Trip plans', 'travel', x'00ff')",
                   "INSERT INTO messages VALUES(9, 1, 'model', 'second')",
                   "INSERT INTO messages VALUES(9, 0, 'user', 'first')", "PRAGMA user_version=7"});
    auto store = open_store(path);
    QVERIFY(store);
    QVERIFY(store->readOnly());
    QStringList problems;
    QObject owner;
    QVERIFY(store->load(&owner, &problems).empty());
    QVERIFY(!problems.isEmpty());
    QCOMPARE(store->unreadable().size(), 1u);
    QCOMPARE(store->unreadable().at(9).title, QStringLiteral("Trip plans"));
    QCOMPARE(store->next_id(), 10);
    QString error;
    const std::optional<QByteArray> json = store->rawChatJson(9, &error);
    QVERIFY2(json, qPrintable(error));
    const QJsonObject o = QJsonDocument::fromJson(*json).object();
    QCOMPARE(o.value("schema_version").toInt(), 7);
    QCOMPARE(o.value("chat").toObject().value("folder").toString(), QStringLiteral("travel"));
    QCOMPARE(o.value("chat").toObject().value("icon").toObject().value("base64").toString(),
             QStringLiteral("AP8="));
    const QJsonArray messages = o.value("messages").toArray();
    QCOMPARE(messages.size(), 2);
    QCOMPARE(messages[0].toObject().value("parts").toString(), QStringLiteral("first"));
    QCOMPARE(messages[1].toObject().value("author").toString(), QStringLiteral("model"));
    QVERIFY(!store->rawChatJson(10, &error));
  }

  // Found by chat_store_fuzz: a negative version indexed the upgrade steps at -247.
  void aNegativeSchemaVersionIsOpenedReadOnly() {
    const QString path = db_path();
    run_sql(path, kV1);
    run_sql(path, {"PRAGMA user_version=-247"});
    QFile file(path);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QByteArray before = file.readAll();
    file.close();
    auto store = open_store(path);
    QVERIFY(store);
    QVERIFY(store->readOnly());
    QVERIFY2(store->readOnlyReason().contains(QStringLiteral("-247")),
             qPrintable(store->readOnlyReason()));
    store.reset();
    QVERIFY(file.open(QIODevice::ReadOnly));
    QCOMPARE(file.readAll(), before);
  }

  void aFileThatIsNoDatabaseIsReportedAndNotTouched() {
    const QString path = db_path();
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    const QByteArray junk(4096, 'x');
    f.write(junk);
    f.close();
    QString error;
    QVERIFY(!ChatStore::open(path, &error));
    QVERIFY2(error.contains(path), qPrintable(error));
    QVERIFY(f.open(QIODevice::ReadOnly));
    QCOMPARE(f.readAll(), junk);
  }

  void aChatThatCannotBeReadIsSkippedAndTheOthersLoad() {
    const QString path = db_path();
    {
      auto store = open_store(path);
      QVERIFY(store);
      ChatSession good(1, QStringLiteral("good"));
      good.beginUserTurn(QStringLiteral("Hi"));
      good.finishReply({1, FinishReason::EndOfGeneration, {}, 1, 0});
      QString error;
      QVERIFY(store->save(good, &error));
    }
    run_sql(path, {"INSERT INTO chats(id, title, system_prompt, sampling, created_ms, updated_ms) "
                   "VALUES(2, 'bad', '', '{}', 0, 0)",
                   "INSERT INTO messages(chat_id, position, role, text, state, note, created_ms) "
                   "VALUES(2, 0, 'robot', 'beep', 'done', '', 0)",
                   "INSERT INTO chats(id, title, system_prompt, sampling, created_ms, updated_ms) "
                   "VALUES(3, 'hot', '', '{\"temperature\":-1}', 0, 0)"});
    auto store = open_store(path);
    QVERIFY(store);
    QStringList problems;
    QObject owner;
    const auto chats = store->load(&owner, &problems);
    QCOMPARE(chats.size(), 1u);
    QCOMPARE(chats[0]->title(), QStringLiteral("Hi"));  // its first message
    QCOMPARE(problems.size(), 2);
    QVERIFY2(problems[0].contains(QStringLiteral("robot")), qPrintable(problems[0]));
    QVERIFY2(problems[1].contains(QStringLiteral("temperature")), qPrintable(problems[1]));
    // Listed with the reason; exported as stored; never written.
    QCOMPARE(store->unreadable().size(), 2u);
    QVERIFY(store->unreadable().at(2).reason.contains(QStringLiteral("robot")));
    QString error;
    const std::optional<QByteArray> json = store->rawChatJson(2, &error);
    QVERIFY2(json, qPrintable(error));
    const QJsonObject o = QJsonDocument::fromJson(*json).object();
    QCOMPARE(o.value("chat").toObject().value("title").toString(), QStringLiteral("bad"));
    QCOMPARE(o.value("messages").toArray()[0].toObject().value("role").toString(),
             QStringLiteral("robot"));
    QVERIFY(o.value("unreadable_because").toString().contains(QStringLiteral("robot")));
    ChatSession taker(3, QStringLiteral("taker"));
    taker.beginUserTurn(QStringLiteral("Hi"));
    QVERIFY(!store->save(taker, &error));
    QVERIFY(!store->remove(2, &error));
    QCOMPARE(store->next_id(), 4);
  }

  void removingAChatRemovesItsMessages() {
    const QString path = db_path();
    auto store = open_store(path);
    QVERIFY(store);
    ChatSession s(5, QStringLiteral("t"));
    s.beginUserTurn(QStringLiteral("Hi"));
    QString error;
    QVERIFY(store->save(s, &error));
    QVERIFY(store->remove(5, &error));
    QVERIFY(!store->contains(5));
    QCOMPARE(sql_value(path, "SELECT count(*) FROM messages").toInt(), 0);
    QCOMPARE(sql_value(path, "SELECT count(*) FROM chats").toInt(), 0);
  }
};

}  // namespace kvscope::ui

QTEST_MAIN(kvscope::ui::ChatStoreTest)
#include "chat_store_test.moc"
