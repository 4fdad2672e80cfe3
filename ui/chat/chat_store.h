// ChatStore: the saved chats, in one SQLite database (Qt SQL, the QSQLITE driver). The app
// keeps it at QStandardPaths::AppDataLocation/chats.sqlite; tests give a scratch path.
//
// Every save is one transaction in WAL mode with synchronous=FULL, so a crash or a kill -9
// at any moment leaves the database as the last committed save left it: the chats lose at
// most the reply being generated (replies still streaming are never written).
//
// Schema (PRAGMA user_version holds its version; opening upgrades older ones in place):
//   v1  chats(id, title, system_prompt, sampling JSON, created_ms, updated_ms)
//       messages(chat_id, position, role, text, state, note, created_ms)
//   v2  + chats.model_path, model_name, model_size, model_mtime_ms (the file the replies
//       came from) and messages.prompt_tokens, tokens, decode_seconds, finish_reason
// A database this build must not write is opened read-only and its chats listed: one of a
// newer version (nothing is changed, not even the journal mode), or a file or folder the
// user cannot write. A chat that cannot be read back stays listed with the reason and can be
// exported as its raw rows; its rows are never written or deleted.
#pragma once

#include <QString>
#include <QStringList>

#include <QByteArray>

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <vector>

#include "worker/engine_messages.h"

class QObject;
class QSqlDatabase;
class QSqlQuery;

namespace kvscope::ui {

class ChatSession;
struct SamplingSettings;

class ChatStore {
 public:
  static constexpr int kSchemaVersion = 2;

  // A saved chat load() could not read: listed with the reason, kept as it is.
  struct UnreadableChat {
    ChatId id = 0;
    QString title;
    QString reason;
  };

  // Opens (creating or upgrading) the database at `path`; nullptr with `error` set when it
  // cannot be used at all (not a database, a folder that cannot be created). A newer schema
  // or a file or folder that cannot be written opens read-only (readOnlyReason() says why).
  static std::unique_ptr<ChatStore> open(const QString& path, QString* error);
  ~ChatStore();
  ChatStore(const ChatStore&) = delete;
  ChatStore& operator=(const ChatStore&) = delete;

  const QString& path() const { return path_; }
  // The saved chats, oldest first, as sessions owned by `parent`. A chat that cannot be
  // read back (an unknown role, unreadable settings, perhaps a newer version's) is skipped
  // and named in `problems`; its rows are never written or deleted by this store.
  std::vector<ChatSession*> load(QObject* parent, QStringList* problems);
  // The id a new chat may take: past every row of the database, skipped chats included.
  ChatId next_id() const;
  // Writes the chat and its messages (all but a reply still streaming) in one transaction.
  // A chat load() skipped is refused (false, `error` says why).
  bool save(const ChatSession& chat, QString* error);
  bool remove(ChatId chat, QString* error);
  bool contains(ChatId chat) const { return saved_.count(chat) > 0; }

  // Read-only: save() and remove() refuse, and this says why ("" when writable).
  bool readOnly() const { return !read_only_reason_.isEmpty(); }
  const QString& readOnlyReason() const { return read_only_reason_; }
  const std::map<ChatId, UnreadableChat>& unreadable() const { return unreadable_; }
  // A chat's rows exactly as stored, every column (a newer version's too), as JSON:
  // {"schema_version", "chat": {column: value}, "messages": [{column: value}]}. For a chat
  // this version cannot read, so it is never invisible; nullopt with `error` otherwise.
  std::optional<QByteArray> rawChatJson(ChatId chat, QString* error) const;

  // Sampling settings as the database keeps them (JSON text); exposed for the tests.
  static QString samplingToJson(const SamplingSettings& settings);
  // Throws UsageError naming the field for a value out of range or an unreadable text.
  static SamplingSettings samplingFromJson(const QString& json);

 private:
  ChatStore(QString path, QString connection);
  QSqlDatabase db() const;
  bool open_connection(bool read_only, bool immutable, QString* error);
  std::optional<int> schema_version(QString* error);
  bool open_writable(QString* error);
  bool open_read_only(const QString& reason, QString* error);
  bool prepare(QString* error);
  bool migrate(QString* error);
  ChatSession* load_chat(const QSqlQuery& row, QObject* parent, QString* problem);
  void list_unreadable(QStringList* problems);
  bool refuse_write(ChatId chat, QString* error) const;

  QString path_;
  QString connection_;  // this store's Qt SQL connection name
  int version_ = 0;     // PRAGMA user_version as opened
  QString read_only_reason_;
  std::set<ChatId> saved_;
  std::map<ChatId, UnreadableChat> unreadable_;  // rows load() skipped: left as they are
};

}  // namespace kvscope::ui
