#include "chat/chat_export.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLocale>

#include "chat/sampling_json.h"
#include "chat/session.h"

namespace kvscope::ui {
namespace {

// The exports' texts are translated in the context "ChatExport" (no QObject here).
struct ChatExport {
  Q_DECLARE_TR_FUNCTIONS(ChatExport)
};

QString when(qint64 ms) {
  return ms > 0 ? QDateTime::fromMSecsSinceEpoch(ms).toString(Qt::ISODate) : QString();
}

QString sampling_line(const SamplingSettings& s) {
  const SamplingParams& p = s.params;
  return ChatExport::tr(
             "temperature %1, top-k %2, top-p %3, min-p %4, repeat penalty %5 over %6 tokens, "
             "frequency penalty %7, presence penalty %8, seed %9, at most %10 tokens per reply")
      .arg(p.temperature)
      .arg(p.top_k)
      .arg(p.top_p)
      .arg(p.min_p)
      .arg(p.repeat_penalty)
      .arg(p.repeat_last_n)
      .arg(p.frequency_penalty)
      .arg(p.presence_penalty)
      .arg(p.seed == 0 ? ChatExport::tr("random") : QString::number(p.seed))
      .arg(s.max_tokens);
}

// "312 tokens · 41.7 tokens/s · end of generation" under a reply's heading.
QString reply_numbers(const ChatItem& item) {
  QStringList parts;
  parts << ChatExport::tr("%1 tokens").arg(item.tokens);
  if (item.tokensPerSecond() > 0)
    parts << ChatExport::tr("%1 tokens/s").arg(item.tokensPerSecond(), 0, 'f', 1);
  if (item.prompt_tokens > 0) parts << ChatExport::tr("prompt %1 tokens").arg(item.prompt_tokens);
  if (!item.finish_reason.isEmpty()) parts << item.finish_reason;
  if (!item.note.isEmpty()) parts << item.note;
  return parts.join(QStringLiteral(" \u00b7 "));
}

}  // namespace

QString chat_markdown(const ChatSession& chat) {
  QString md = QStringLiteral("# %1\n\n").arg(chat.title());
  const ModelRef& m = chat.model();
  md += ChatExport::tr("- **Model:** %1\n").arg(m.isSet() ? m.name : ChatExport::tr("none yet"));
  if (!m.path.isEmpty()) md += ChatExport::tr("- **File:** `%1`\n").arg(m.path);
  md += ChatExport::tr("- **Sampling:** %1\n").arg(sampling_line(chat.sampling()));
  if (!chat.systemPrompt().trimmed().isEmpty()) {
    md += ChatExport::tr("- **System prompt:** %1\n").arg(chat.systemPrompt().simplified());
  }
  md += ChatExport::tr("- **Started:** %1\n").arg(when(chat.createdMs()));
  for (const ChatItem& item : chat.items()) {
    if (item.state == ChatItem::State::Streaming) continue;
    if (item.role == QLatin1String("user")) {
      md += ChatExport::tr("\n## You\n\n");
    } else {
      md += ChatExport::tr("\n## %1\n\n*%2*\n\n")
                .arg(m.isSet() ? m.name : ChatExport::tr("Assistant"), reply_numbers(item));
    }
    md += item.text.trimmed() + QLatin1Char('\n');
  }
  return md;
}

QByteArray chat_json(const ChatSession& chat) {
  const ModelRef& m = chat.model();
  QJsonArray messages;
  for (const ChatItem& item : chat.items()) {
    if (item.state == ChatItem::State::Streaming) continue;
    QJsonObject o{{"role", item.role},
                  {"text", item.text},
                  {"state", chat_item_state_name(item.state)},
                  {"created", when(item.created_ms)}};
    if (!item.note.isEmpty()) o["note"] = item.note;
    if (item.role == QLatin1String("assistant")) {
      o["prompt_tokens"] = item.prompt_tokens;
      o["tokens"] = item.tokens;
      o["decode_seconds"] = item.decode_seconds;
      o["tokens_per_second"] = item.tokensPerSecond();
      o["finish_reason"] = item.finish_reason;
    }
    messages.push_back(o);
  }
  const QJsonObject doc{
      {"format", "kvscope-chat"},
      {"version", 1},
      {"title", chat.title()},
      {"created", when(chat.createdMs())},
      {"system_prompt", chat.systemPrompt()},
      {"model",
       QJsonObject{
           {"name", m.name}, {"path", m.path}, {"size", m.size}, {"modified", when(m.mtime_ms)}}},
      {"sampling", samplingSettingsJson(chat.sampling())},
      {"messages", messages}};
  return QJsonDocument(doc).toJson(QJsonDocument::Indented);
}

}  // namespace kvscope::ui
