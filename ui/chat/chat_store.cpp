#include "chat/chat_store.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QDir>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QVariant>

#include <algorithm>
#include <atomic>

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
  QSqlDatabase d = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), name);
  d.setDatabaseName(path);
  d.setConnectOptions(QStringLiteral("QSQLITE_BUSY_TIMEOUT=2000"));
  QString why;
  if (!d.open()) {
    why = sql_error(ChatStoreText::tr("cannot open"), d.lastError());
  } else if (store->refuse_newer(&why) && store->prepare(&why) && store->migrate(&why)) {
    return store;
  }
  *error = QStringLiteral("%1: %2").arg(path, why);
  return nullptr;
}

// A newer version's database is refused before anything is written to it: even switching
// the journal to WAL rewrites its header, and the notice says it was left as it is.
bool ChatStore::refuse_newer(QString* error) {
  QSqlQuery q(db());
  if (!exec(q, QStringLiteral("PRAGMA user_version"), error) || !q.next()) {
    if (error->isEmpty()) *error = ChatStoreText::tr("no schema version");
    return false;
  }
  const int version = q.value(0).toInt();
  if (version <= kSchemaVersion) return true;
  *error = ChatStoreText::tr(
               "written by a newer KVScope (schema %1; this one reads up to %2); left as it is")
               .arg(version)
               .arg(kSchemaVersion);
  return false;
}

// WAL: a reader never blocks the writer, and a commit is one append to the log;
// synchronous=FULL syncs it, so a commit survives even a power cut, not only a kill.
bool ChatStore::prepare(QString* error) {
  QSqlQuery q(db());
  return exec(q, QStringLiteral("PRAGMA journal_mode=WAL"), error) &&
         exec(q, QStringLiteral("PRAGMA synchronous=FULL"), error) &&
         exec(q, QStringLiteral("PRAGMA foreign_keys=ON"), error);
}

bool ChatStore::migrate(QString* error) {
  QSqlQuery q(db());
  if (!exec(q, QStringLiteral("PRAGMA user_version"), error) || !q.next()) {
    if (error->isEmpty()) *error = ChatStoreText::tr("no schema version");
    return false;
  }
  const int version = q.value(0).toInt();  // not newer: refuse_newer() ran first
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
  QSqlQuery q(db());
  if (!q.exec(QStringLiteral("SELECT id, title, system_prompt, sampling, created_ms, model_path, "
                             "model_name, model_size, model_mtime_ms FROM chats ORDER BY id"))) {
    problems->push_back(sql_error(ChatStoreText::tr("reading the saved chats"), q.lastError()));
    return chats;
  }
  while (q.next()) {
    QString problem;
    if (ChatSession* s = load_chat(q, parent, &problem)) {
      chats.push_back(s);
      saved_.insert(s->id());
    } else {
      unreadable_.insert(q.value(0).toLongLong());
      problems->push_back(ChatStoreText::tr("saved chat %1 (\u201c%2\u201d) skipped: %3")
                              .arg(q.value(0).toLongLong())
                              .arg(q.value(1).toString().left(60), problem));
    }
  }
  return chats;
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
  m.prepare(
      QStringLiteral("SELECT role, text, state, note, created_ms, prompt_tokens, tokens, "
                     "decode_seconds, finish_reason FROM messages WHERE chat_id = ? "
                     "ORDER BY position"));
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
  for (const std::set<ChatId>* ids : {&saved_, &unreadable_}) {
    if (!ids->empty()) next = std::max(next, *ids->rbegin() + 1);
  }
  QSqlQuery q(db());
  if (q.exec(QStringLiteral("SELECT MAX(id) FROM chats")) && q.next() && !q.isNull(0)) {
    next = std::max(next, q.value(0).toLongLong() + 1);
  }
  return next;
}

// A chat this version could not read must not be overwritten by one that took its id, or
// deleted unread.
static bool refuse_unreadable(const std::set<ChatId>& unreadable, ChatId chat, QString* error) {
  if (unreadable.count(chat) == 0) return false;
  *error = ChatStoreText::tr("saved chat %1 could not be read by this version and is left as it is")
               .arg(chat);
  return true;
}

bool ChatStore::save(const ChatSession& chat, QString* error) {
  if (refuse_unreadable(unreadable_, chat.id(), error)) return false;
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
  if (refuse_unreadable(unreadable_, chat, error)) return false;
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
