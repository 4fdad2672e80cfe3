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
// A database of a newer version than this build knows is not opened (nothing is changed).
#pragma once

#include <QString>
#include <QStringList>

#include <memory>
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

  // Opens (creating or upgrading) the database at `path`; nullptr with `error` set when it
  // cannot be used (not a database, a newer schema, a folder that cannot be written).
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

  // Sampling settings as the database keeps them (JSON text); exposed for the tests.
  static QString samplingToJson(const SamplingSettings& settings);
  // Throws UsageError naming the field for a value out of range or an unreadable text.
  static SamplingSettings samplingFromJson(const QString& json);

 private:
  ChatStore(QString path, QString connection);
  QSqlDatabase db() const;
  bool refuse_newer(QString* error);
  bool prepare(QString* error);
  bool migrate(QString* error);
  ChatSession* load_chat(const QSqlQuery& row, QObject* parent, QString* problem);

  QString path_;
  QString connection_;  // this store's Qt SQL connection name
  std::set<ChatId> saved_;
  std::set<ChatId> unreadable_;  // rows load() skipped: left as they are
};

}  // namespace kvscope::ui
