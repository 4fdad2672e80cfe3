// ChatStore::rawChatJson (chat_store.h): a saved chat's rows exactly as the database holds
// them, every column (a newer version's too), so that a chat this version cannot read can
// still be taken away as a file; nothing is interpreted and nothing is written.
#include <QCoreApplication>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QSqlRecord>
#include <QVariant>

#include "chat/chat_store.h"

namespace kvscope::ui {
namespace {

// The texts of the store's errors (no QObject here), in the store's translation context.
struct ChatStoreText {
  Q_DECLARE_TR_FUNCTIONS(ChatStore)
};

// A stored value as JSON: numbers and text as they are, NULL as null, a blob as base64.
QJsonValue column_json(const QVariant& v) {
  if (v.isNull()) return QJsonValue::Null;
  switch (v.typeId()) {
    case QMetaType::LongLong:
    case QMetaType::Int:
      return QJsonValue(v.toLongLong());
    case QMetaType::Double:
      return QJsonValue(v.toDouble());
    case QMetaType::QByteArray:
      return QJsonObject{
          {QStringLiteral("base64"), QString::fromLatin1(v.toByteArray().toBase64())}};
    default:
      return QJsonValue(v.toString());
  }
}

QJsonObject row_json(const QSqlQuery& q) {
  QJsonObject row;
  const QSqlRecord record = q.record();
  for (int i = 0; i < record.count(); ++i) row.insert(record.fieldName(i), column_json(q.value(i)));
  return row;
}

}  // namespace

std::optional<QByteArray> ChatStore::rawChatJson(ChatId chat, QString* error) const {
  QSqlQuery c(db());
  c.prepare(QStringLiteral("SELECT * FROM chats WHERE id = ?"));
  c.addBindValue(chat);
  if (!c.exec() || !c.next()) {
    *error = c.lastError().isValid()
                 ? QStringLiteral("%1: %2").arg(ChatStoreText::tr("reading chat %1").arg(chat),
                                                c.lastError().text().trimmed())
                 : ChatStoreText::tr("no saved chat %1").arg(chat);
    return std::nullopt;
  }
  QJsonObject out{{QStringLiteral("schema_version"), version_},
                  {QStringLiteral("chat"), row_json(c)}};
  if (auto it = unreadable_.find(chat); it != unreadable_.end()) {
    out.insert(QStringLiteral("unreadable_because"), it->second.reason);
  }
  // By position where the table has one (every version so far), else as stored.
  QJsonArray messages;
  QSqlQuery m(db());
  for (const QString& order : {QStringLiteral(" ORDER BY position"), QString()}) {
    m.prepare(QStringLiteral("SELECT * FROM messages WHERE chat_id = ?") + order);
    m.addBindValue(chat);
    if (m.exec()) break;
  }
  if (m.isActive()) {
    while (m.next()) messages.push_back(row_json(m));
    out.insert(QStringLiteral("messages"), messages);
  } else {
    out.insert(QStringLiteral("messages_error"), m.lastError().text().trimmed());
  }
  return QJsonDocument(out).toJson(QJsonDocument::Indented);
}

}  // namespace kvscope::ui
