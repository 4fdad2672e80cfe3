#include "chat/chat_store.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QDir>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSet>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QSqlRecord>
#include <QUrl>
#include <QVariant>

#include <algorithm>
#include <atomic>
#include <span>

#include "chat/sampling_json.h"
#include "chat/session.h"
#include "util/error.h"

namespace kvscope::ui {
namespace {

// The texts of the store's errors, shown in the notice bar (no QObject here).
struct ChatStoreText {
  Q_DECLARE_TR_FUNCTIONS(ChatStore)
};

// Each step takes the database from version i to i + 1 (index i - 1 here; 0 -> 1 creates it).
const char* const kMigrations[][8] = {
    {"CREATE TABLE chats(id INTEGER PRIMARY KEY, title TEXT NOT NULL, system_prompt TEXT NOT "
     "NULL, sampling TEXT NOT NULL, created_ms INTEGER NOT NULL, updated_ms INTEGER NOT NULL)",
     "CREATE TABLE messages(chat_id INTEGER NOT NULL REFERENCES chats(id) ON DELETE CASCADE, "
     "position INTEGER NOT NULL, role TEXT NOT NULL, text TEXT NOT NULL, state TEXT NOT NULL, "
     "note TEXT NOT NULL, created_ms INTEGER NOT NULL, PRIMARY KEY(chat_id, position))",
     nullptr},
    {"ALTER TABLE chats ADD COLUMN model_path TEXT NOT NULL DEFAULT ''",
     "ALTER TABLE chats ADD COLUMN model_name TEXT NOT NULL DEFAULT ''",
     "ALTER TABLE chats ADD COLUMN model_size INTEGER NOT NULL DEFAULT -1",
     "ALTER TABLE chats ADD COLUMN model_mtime_ms INTEGER NOT NULL DEFAULT 0",
     "ALTER TABLE messages ADD COLUMN prompt_tokens INTEGER NOT NULL DEFAULT 0",
     "ALTER TABLE messages ADD COLUMN tokens INTEGER NOT NULL DEFAULT 0",
     "ALTER TABLE messages ADD COLUMN decode_seconds REAL NOT NULL DEFAULT 0",
     "ALTER TABLE messages ADD COLUMN finish_reason TEXT NOT NULL DEFAULT ''"},
};
static_assert(std::size(kMigrations) == ChatStore::kSchemaVersion);

std::optional<ChatItem::State> state_from_name(const QString& name) {
  if (name == QLatin1String("done")) return ChatItem::State::Done;
  if (name == QLatin1String("stopped")) return ChatItem::State::Stopped;
  if (name == QLatin1String("failed")) return ChatItem::State::Failed;
  return std::nullopt;
}

// A null QString binds as SQL NULL; the columns are NOT NULL text.
QVariant text(const QString& s) {
  return QVariant(s.isNull() ? QString(QLatin1String("")) : s);
}

QString sql_error(const QString& what, const QSqlError& e) {
  return QStringLiteral("%1: %2").arg(what, e.text().trimmed());
}

bool exec(QSqlQuery& q, const QString& sql, QString* error) {
  if (q.exec(sql)) return true;
  *error = sql_error(sql.left(60), q.lastError());
  return false;
}

struct ColumnDefault {
  const char* name;
  const char* default_value;  // SQL
};

// The columns schema 2 added, with the values a version-1 row stands for (read-only stores
// are not upgraded).
const ColumnDefault kChatColumnsSince2[] = {
    {"model_path", "''"}, {"model_name", "''"}, {"model_size", "-1"}, {"model_mtime_ms", "0"}};
const ColumnDefault kMessageColumnsSince2[] = {
    {"prompt_tokens", "0"}, {"tokens", "0"}, {"decode_seconds", "0.0"}, {"finish_reason", "''"}};

// "a, b, 0 AS c": each column the table has, else its default. A read-only store may be
// older or newer than this version; the columns it lacks stand for their defaults.
QString columns_or_defaults(const QSqlDatabase& db, const QString& table,
                            std::span<const ColumnDefault> columns) {
  QSet<QString> present;
  QSqlQuery q(db);
  if (q.exec(QStringLiteral("PRAGMA table_info(%1)").arg(table))) {
    while (q.next()) present.insert(q.value(1).toString());
  }
  QStringList list;
  for (const ColumnDefault& c : columns) {
    const QString name = QString::fromLatin1(c.name);
    list << (present.contains(name)
                 ? name
                 : QStringLiteral("%1 AS %2").arg(QString::fromLatin1(c.default_value), name));
  }
  return list.join(QStringLiteral(", "));
}

}  // namespace

ChatStore::ChatStore(QString path, QString connection)
    : path_(std::move(path)), connection_(std::move(connection)) {}

ChatStore::~ChatStore() {
  {
    QSqlDatabase d = db();
    if (d.isOpen()) d.close();
  }
  QSqlDatabase::removeDatabase(connection_);
}

QSqlDatabase ChatStore::db() const {
  return QSqlDatabase::database(connection_, false);
}

std::unique_ptr<ChatStore> ChatStore::open(const QString& path, QString* error) {
  static std::atomic<int> count{0};
  if (!QSqlDatabase::isDriverAvailable(QStringLiteral("QSQLITE"))) {
    *error = ChatStoreText::tr("Qt's SQLite driver (QSQLITE) is not installed");
    return nullptr;
  }
  if (!QDir().mkpath(QFileInfo(path).absolutePath())) {
    *error = ChatStoreText::tr("cannot create the folder %1").arg(QFileInfo(path).absolutePath());
    return nullptr;
  }
  const QString name = QStringLiteral("kvscope-chats-%1").arg(++count);
  std::unique_ptr<ChatStore> store(new ChatStore(path, name));
  QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), name);
  QString why;
  if (store->open_writable(&why)) return store;
  *error = QStringLiteral("%1: %2").arg(path, why);
  return nullptr;
}

// (Re)opens this store's connection. Read-only never writes the file, not even the journal
// mode; `immutable` also reads a WAL database whose folder cannot hold its -shm file (SQLite
// then ignores other writers, acceptable for a listing nobody writes to).
bool ChatStore::open_connection(bool read_only, bool immutable, QString* error) {
  QSqlDatabase d = db();
  if (d.isOpen()) d.close();
  QString options = QStringLiteral("QSQLITE_BUSY_TIMEOUT=2000");
  if (read_only) options += QStringLiteral(";QSQLITE_OPEN_READONLY");
  if (immutable) {
    options += QStringLiteral(";QSQLITE_OPEN_URI");
    d.setDatabaseName(QUrl::fromLocalFile(path_).toString(QUrl::FullyEncoded) +
                      QStringLiteral("?immutable=1"));
  } else {
    d.setDatabaseName(path_);
  }
  d.setConnectOptions(options);
  if (d.open()) return true;
  *error = sql_error(ChatStoreText::tr("cannot open"), d.lastError());
  return false;
}

std::optional<int> ChatStore::schema_version(QString* error) {
  QSqlQuery q(db());
  if (!exec(q, QStringLiteral("PRAGMA user_version"), error) || !q.next()) {
    if (error->isEmpty()) *error = ChatStoreText::tr("no schema version");
    return std::nullopt;
  }
  return q.value(0).toInt();
}

// Read-write when it can be: a newer version's database, and one whose file or folder this
// user cannot write (the journal mode or the upgrade fails), are opened read-only instead.
// A newer one is never written to before its version is known: even switching the journal to
// WAL rewrites its header.
bool ChatStore::open_writable(QString* error) {
  // Unreadable read-write (e.g. a WAL database in a folder that cannot hold its -shm file):
  // perhaps readable read-only; if not, the read-write error is the one that says most.
  auto read_only_or = [this, error](const QString& failure) {
    QString ignored;
    if (open_read_only(ChatStoreText::tr("it cannot be written (%1)").arg(failure), &ignored)) {
      return true;
    }
    *error = failure;
    return false;
  };
  QString why;
  if (!open_connection(false, false, &why)) return read_only_or(why);
  const std::optional<int> version = schema_version(&why);
  if (!version) return read_only_or(why);
  version_ = *version;
  if (version_ < 0) {  // no version any KVScope writes (found by chat_store_fuzz)
    return open_read_only(
        ChatStoreText::tr("its schema version %1 is not one KVScope writes").arg(version_), error);
  }
  if (version_ > kSchemaVersion) {
    return open_read_only(
        ChatStoreText::tr("written by a newer KVScope (schema %1; this one reads up to %2)")
            .arg(version_)
            .arg(kSchemaVersion),
        error);
  }
  if (prepare(&why) && migrate(&why)) {
    version_ = kSchemaVersion;
    return true;
  }
  return read_only_or(why);
}

bool ChatStore::open_read_only(const QString& reason, QString* error) {
  for (const bool immutable : {false, true}) {
    if (!open_connection(true, immutable, error)) continue;
    if (const std::optional<int> version = schema_version(error)) {
      version_ = *version;
      read_only_reason_ = reason;
      return true;
    }
  }
  return false;
}

// WAL: a reader never blocks the writer, and a commit is one append to the log;
// synchronous=FULL syncs it, so a commit survives even a power cut, not only a kill.
bool ChatStore::prepare(QString* error) {
  QSqlQuery q(db());
  // SQLite opens a file it may not write read-only without a word, and a WAL database whose
  // -shm it may not write reads fine too (even BEGIN IMMEDIATE passes): a write rolled back
  // (the version as it is) is what tells, before the first save would fail.
  return exec(q, QStringLiteral("PRAGMA journal_mode=WAL"), error) &&
         exec(q, QStringLiteral("PRAGMA synchronous=FULL"), error) &&
         exec(q, QStringLiteral("PRAGMA foreign_keys=ON"), error) &&
         exec(q, QStringLiteral("BEGIN IMMEDIATE"), error) &&
         exec(q, QStringLiteral("PRAGMA user_version=%1").arg(version_), error) &&
         exec(q, QStringLiteral("ROLLBACK"), error);
}

bool ChatStore::migrate(QString* error) {
  QSqlQuery q(db());
  if (!exec(q, QStringLiteral("PRAGMA user_version"), error) || !q.next()) {
    if (error->isEmpty()) *error = ChatStoreText::tr("no schema version");
    return false;
  }
  const int version = q.value(0).toInt();  // not newer: open_writable() checked
  for (int v = version; v < kSchemaVersion; ++v) {
    QSqlDatabase d = db();
    d.transaction();
    for (const char* sql : kMigrations[v]) {
      if (sql && !exec(q, QString::fromLatin1(sql), error)) {
        d.rollback();
        return false;
      }
    }
    if (!exec(q, QStringLiteral("PRAGMA user_version=%1").arg(v + 1), error) || !d.commit()) {
      if (error->isEmpty()) *error = sql_error(ChatStoreText::tr("commit"), d.lastError());
      d.rollback();
      return false;
    }
  }
  return true;
}

std::vector<ChatSession*> ChatStore::load(QObject* parent, QStringList* problems) {
  std::vector<ChatSession*> chats;
  if (version_ == 0) return chats;  // a new database, or an empty one opened read-only
  QSqlQuery q(db());
  if (!q.exec(QStringLiteral("SELECT id, title, system_prompt, sampling, created_ms, %1 FROM "
                             "chats ORDER BY id")
                  .arg(columns_or_defaults(db(), QStringLiteral("chats"), kChatColumnsSince2)))) {
    // A newer layout this version cannot read: its chats are still listed, by id and title.
    problems->push_back(sql_error(ChatStoreText::tr("reading the saved chats"), q.lastError()));
    list_unreadable(problems);
    return chats;
  }
  while (q.next()) {
    QString problem;
    if (ChatSession* s = load_chat(q, parent, &problem)) {
      chats.push_back(s);
      saved_.insert(s->id());
    } else {
      const ChatId id = q.value(0).toLongLong();
      unreadable_[id] = {id, q.value(1).toString(), problem};
      problems->push_back(ChatStoreText::tr("saved chat %1 (\u201c%2\u201d) cannot be read by "
                                            "this version: %3; it is listed greyed and left as "
                                            "it is")
                              .arg(id)
                              .arg(q.value(1).toString().left(60), problem));
    }
  }
  return chats;
}

void ChatStore::list_unreadable(QStringList* problems) {
  QSqlQuery q(db());
  if (!q.exec(QStringLiteral("SELECT * FROM chats"))) {
    problems->push_back(sql_error(ChatStoreText::tr("listing the saved chats"), q.lastError()));
    return;
  }
  const QSqlRecord record = q.record();
  const int id_column = record.indexOf(QStringLiteral("id"));
  const int title_column = record.indexOf(QStringLiteral("title"));
  if (id_column < 0) return;  // next_id() still reads MAX(id) if there is one
  while (q.next()) {
    const ChatId id = q.value(id_column).toLongLong();
    const QString title = title_column >= 0 ? q.value(title_column).toString() : QString();
    unreadable_[id] = {id, title,
                       ChatStoreText::tr("its table has a layout this version does "
                                         "not know")};
  }
}

ChatSession* ChatStore::load_chat(const QSqlQuery& row, QObject* parent, QString* problem) {
  const ChatId id = row.value(0).toLongLong();
  SamplingSettings sampling;
  try {
    sampling = samplingFromJson(row.value(3).toString());
  } catch (const std::exception& e) {
    *problem = ChatStoreText::tr("its sampling settings: %1").arg(QString::fromUtf8(e.what()));
    return nullptr;
  }
  QSqlQuery m(db());
  m.prepare(QStringLiteral("SELECT role, text, state, note, created_ms, %1 FROM messages WHERE "
                           "chat_id = ? ORDER BY position")
                .arg(columns_or_defaults(db(), QStringLiteral("messages"), kMessageColumnsSince2)));
  m.addBindValue(id);
  if (!m.exec()) {
    *problem = sql_error(ChatStoreText::tr("its messages"), m.lastError());
    return nullptr;
  }
  QVector<ChatItem> items;
  while (m.next()) {
    ChatItem item;
    item.role = m.value(0).toString();
    const auto state = state_from_name(m.value(2).toString());
    if (item.role != QLatin1String("user") && item.role != QLatin1String("assistant")) {
      *problem = ChatStoreText::tr("message %1 has the unknown role \u201c%2\u201d")
                     .arg(items.size() + 1)
                     .arg(item.role.left(40));
      return nullptr;
    }
    if (!state) {
      *problem = ChatStoreText::tr("message %1 has the unknown state \u201c%2\u201d")
                     .arg(items.size() + 1)
                     .arg(m.value(2).toString().left(40));
      return nullptr;
    }
    item.text = m.value(1).toString();
    item.state = *state;
    item.note = m.value(3).toString();
    item.created_ms = m.value(4).toLongLong();
    item.prompt_tokens = m.value(5).toLongLong();
    item.tokens = m.value(6).toLongLong();
    item.decode_seconds = m.value(7).toDouble();
    item.finish_reason = m.value(8).toString();
    items.push_back(std::move(item));
  }
  auto* s = new ChatSession(id, row.value(1).toString(), parent);
  s->setSystemPrompt(row.value(2).toString());
  s->setSampling(sampling);
  s->setModel({row.value(5).toString(), row.value(6).toString(), row.value(7).toLongLong(),
               row.value(8).toLongLong()});
  s->restore(std::move(items), row.value(4).toLongLong());
  return s;
}

ChatId ChatStore::next_id() const {
  ChatId next = 1;
  if (!saved_.empty()) next = std::max(next, *saved_.rbegin() + 1);
  if (!unreadable_.empty()) next = std::max(next, unreadable_.rbegin()->first + 1);
  QSqlQuery q(db());
  if (q.exec(QStringLiteral("SELECT MAX(id) FROM chats")) && q.next() && !q.isNull(0)) {
    next = std::max(next, q.value(0).toLongLong() + 1);
  }
  return next;
}

// A chat this version could not read must not be overwritten by one that took its id, or
// deleted unread; a read-only store writes nothing.
bool ChatStore::refuse_write(ChatId chat, QString* error) const {
  if (readOnly()) {
    *error = ChatStoreText::tr("the saved chats are read-only: %1").arg(read_only_reason_);
    return true;
  }
  if (unreadable_.count(chat) == 0) return false;
  *error = ChatStoreText::tr("saved chat %1 could not be read by this version and is left as it is")
               .arg(chat);
  return true;
}

bool ChatStore::save(const ChatSession& chat, QString* error) {
  if (refuse_write(chat.id(), error)) return false;
  QSqlDatabase d = db();
  if (!d.transaction()) {
    *error = sql_error(ChatStoreText::tr("starting a transaction"), d.lastError());
    return false;
  }
  QSqlQuery q(d);
  int column = 0;
  q.prepare(QStringLiteral(
      "INSERT INTO chats(id, title, system_prompt, sampling, created_ms, updated_ms, model_path, "
      "model_name, model_size, model_mtime_ms) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
      "ON CONFLICT(id) DO UPDATE SET title = excluded.title, system_prompt = "
      "excluded.system_prompt, sampling = excluded.sampling, updated_ms = excluded.updated_ms, "
      "model_path = excluded.model_path, model_name = excluded.model_name, model_size = "
      "excluded.model_size, model_mtime_ms = excluded.model_mtime_ms"));
  for (const QVariant& v :
       {QVariant(chat.id()), text(chat.title()), text(chat.systemPrompt()),
        QVariant(samplingToJson(chat.sampling())), QVariant(chat.createdMs()),
        QVariant(QDateTime::currentMSecsSinceEpoch()), text(chat.model().path),
        text(chat.model().name), QVariant(chat.model().size), QVariant(chat.model().mtime_ms)}) {
    q.bindValue(column++, v);
  }
  QSqlError failed;
  auto run = [&failed](QSqlQuery& query) {
    if (query.exec()) return true;
    failed = query.lastError();
    return false;
  };
  QSqlQuery del(d);
  del.prepare(QStringLiteral("DELETE FROM messages WHERE chat_id = ?"));
  del.addBindValue(chat.id());
  bool ok = run(q) && run(del);
  QSqlQuery ins(d);
  ins.prepare(QStringLiteral(
      "INSERT INTO messages(chat_id, position, role, text, state, note, created_ms, "
      "prompt_tokens, tokens, decode_seconds, finish_reason) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
      "?)"));
  qint64 position = 0;
  for (const ChatItem& item : chat.items()) {
    if (!ok) break;
    if (item.state == ChatItem::State::Streaming) continue;  // lost by a crash, by design
    column = 0;
    for (const QVariant& v :
         {QVariant(chat.id()), QVariant(position++), text(item.role), text(item.text),
          QVariant(chat_item_state_name(item.state)), text(item.note), QVariant(item.created_ms),
          QVariant(item.prompt_tokens), QVariant(item.tokens), QVariant(item.decode_seconds),
          text(item.finish_reason)}) {
      ins.bindValue(column++, v);
    }
    ok = run(ins);
  }
  if (!ok || !d.commit()) {
    *error =
        sql_error(ChatStoreText::tr("saving chat %1").arg(chat.id()), ok ? d.lastError() : failed);
    d.rollback();
    return false;
  }
  saved_.insert(chat.id());
  return true;
}

bool ChatStore::remove(ChatId chat, QString* error) {
  if (refuse_write(chat, error)) return false;
  QSqlQuery q(db());
  q.prepare(QStringLiteral("DELETE FROM chats WHERE id = ?"));  // messages: ON DELETE CASCADE
  q.addBindValue(chat);
  if (!q.exec()) {
    *error = sql_error(ChatStoreText::tr("deleting chat %1").arg(chat), q.lastError());
    return false;
  }
  saved_.erase(chat);
  return true;
}

QString ChatStore::samplingToJson(const SamplingSettings& s) {
  return QString::fromUtf8(QJsonDocument(samplingSettingsJson(s)).toJson(QJsonDocument::Compact));
}

SamplingSettings ChatStore::samplingFromJson(const QString& json) {
  return samplingSettingsFromJson(json);
}

}  // namespace kvscope::ui
