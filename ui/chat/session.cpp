#include "chat/session.h"

#include <QDateTime>
#include <QRandomGenerator>

#include <utility>

namespace kvscope::ui {
namespace {

// A new chat's title: its first message, simplified; one over 40 characters cut at the end of
// a word with an ellipsis ("Explain what a KV cache is in two…", not "... in two senten").
QString title_of_message(const QString& text) {
  constexpr qsizetype kMaxTitle = 40;
  const QString t = text.simplified();
  if (t.size() <= kMaxTitle) return t;
  QString cut = t.left(kMaxTitle - 1);
  if (const qsizetype space = cut.lastIndexOf(QLatin1Char(' ')); space >= kMaxTitle / 2) {
    cut.truncate(space);
  }
  return cut + QChar(0x2026);
}

}  // namespace

QString chat_item_state_name(ChatItem::State state) {
  switch (state) {
    case ChatItem::State::Done:
      return QStringLiteral("done");
    case ChatItem::State::Stopped:
      return QStringLiteral("stopped");
    case ChatItem::State::Failed:
      return QStringLiteral("failed");
    case ChatItem::State::Streaming:
      break;
  }
  return QStringLiteral("streaming");
}

ChatSession::ChatSession(ChatId id, QString title, QObject* parent)
    : QObject(parent),
      id_(id),
      title_(std::move(title)),
      created_ms_(QDateTime::currentMSecsSinceEpoch()) {}

void ChatSession::setTitle(const QString& title) {
  const QString t = title.simplified();
  if (t.isEmpty() || (titled_ && t == title_)) return;
  titled_ = true;
  title_ = t;
  emit titleChanged(title_);
  emit contentChanged();
}

void ChatSession::setSystemPrompt(const QString& text) {
  if (text == system_prompt_) return;
  system_prompt_ = text;
  emit contentChanged();
}

void ChatSession::setSampling(const SamplingSettings& settings) {
  sampling_ = settings;
  emit contentChanged();
}

void ChatSession::setModel(const ModelRef& model) {
  if (model.sameFile(model_) && model.name == model_.name) return;
  model_ = model;
  emit contentChanged();
}

void ChatSession::restore(QVector<ChatItem> items, qint64 created_ms) {
  for (ChatItem& item : items) {
    if (item.state == ChatItem::State::Streaming) item.state = ChatItem::State::Stopped;
  }
  items_ = std::move(items);
  created_ms_ = created_ms;
  titled_ = true;
  emit itemsReset();
}

void ChatSession::push_item(const QString& role, const QString& text, ChatItem::State state) {
  ChatItem item;
  item.role = role;
  item.text = text;
  item.state = state;
  item.created_ms = QDateTime::currentMSecsSinceEpoch();
  items_.push_back(std::move(item));
}

ChatRequest ChatSession::beginUserTurn(const QString& text) {
  if (!titled_) {
    titled_ = true;
    title_ = title_of_message(text);
    emit titleChanged(title_);
  }
  push_item(QStringLiteral("user"), text, ChatItem::State::Done);
  push_item(QStringLiteral("assistant"), {}, ChatItem::State::Streaming);
  emit itemsReset();
  emit contentChanged();
  set_generating(true);
  return request_for_last_reply();
}

std::optional<ChatRequest> ChatSession::beginRegenerate() {
  if (generating_ || items_.size() < 2 || items_.back().role != QLatin1String("assistant")) {
    return std::nullopt;
  }
  items_.pop_back();
  push_item(QStringLiteral("assistant"), {}, ChatItem::State::Streaming);
  emit itemsReset();
  emit contentChanged();
  set_generating(true);
  return request_for_last_reply();
}

std::optional<QString> ChatSession::takeLastUserMessage() {
  if (generating_) return std::nullopt;
  for (qsizetype i = items_.size() - 1; i >= 0; --i) {
    if (items_[i].role == QLatin1String("user")) {
      QString text = items_[i].text;
      items_.resize(i);
      emit itemsReset();
      emit contentChanged();
      return text;
    }
  }
  return std::nullopt;
}

// The conversation before the (empty, streaming) last reply. Replies that failed or were
// stopped before any text are left out; stopped replies with text stay, as the user saw them.
ChatRequest ChatSession::request_for_last_reply() {
  ChatRequest r;
  r.chat = id_;
  if (!system_prompt_.trimmed().isEmpty()) {
    r.messages.push_back({"system", system_prompt_.toStdString()});
  }
  for (qsizetype i = 0; i + 1 < items_.size(); ++i) {
    const ChatItem& item = items_[i];
    if (item.text.isEmpty()) continue;
    r.messages.push_back({item.role.toStdString(), item.text.toStdString()});
  }
  r.sampling = sampling_.params;
  r.sampling.seed = sampling_.params.seed == 0 ? QRandomGenerator::global()->generate64()
                                               : sampling_.params.seed + attempts_;
  ++attempts_;
  r.max_tokens = sampling_.max_tokens;
  return r;
}

void ChatSession::replyStarted(qint64 prompt_tokens) {
  prompt_tokens_ = prompt_tokens;
  context_used_ = prompt_tokens;
  emit contextUsedChanged(context_used_);
}

void ChatSession::appendReplyText(const QString& text, qint64 generated_tokens) {
  if (items_.isEmpty() || items_.back().state != ChatItem::State::Streaming) return;
  if (items_.back().text.isEmpty()) decode_clock_.start();
  items_.back().text += text;
  context_used_ = prompt_tokens_ + generated_tokens;
  emit contextUsedChanged(context_used_);
  emit lastItemChanged();
}

void ChatSession::finishReply(const ReplyFinished& result) {
  if (items_.isEmpty() || items_.back().state != ChatItem::State::Streaming) return;
  ChatItem& item = items_.back();
  item.prompt_tokens = result.prompt_tokens;
  item.tokens = result.generated_tokens;
  item.decode_seconds = decode_clock_.isValid() && !item.text.isEmpty()
                            ? static_cast<double>(decode_clock_.nsecsElapsed()) * 1e-9
                            : 0.0;
  decode_clock_.invalidate();
  const std::string_view reason = finish_reason_name(result.reason);
  item.finish_reason = QString::fromUtf8(reason.data(), static_cast<qsizetype>(reason.size()));
  switch (result.reason) {
    case FinishReason::Cancelled:
      item.state = ChatItem::State::Stopped;
      item.note = result.error.isEmpty() ? tr("stopped") : result.error;
      break;
    case FinishReason::Error:
      item.state = ChatItem::State::Failed;
      item.note = result.error;
      break;
    case FinishReason::ContextFull:
      item.state = ChatItem::State::Stopped;
      item.note = tr("context full: %1").arg(result.error);
      break;
    case FinishReason::Length:
      item.state = ChatItem::State::Done;
      item.note = tr("reached the reply length limit");
      break;
    default:
      item.state = ChatItem::State::Done;
      break;
  }
  if (result.prompt_tokens > 0) {
    context_used_ = result.prompt_tokens + result.generated_tokens;
    emit contextUsedChanged(context_used_);
  }
  emit lastItemChanged();
  set_generating(false);
  emit contentChanged();
}

void ChatSession::set_generating(bool generating) {
  if (generating_ == generating) return;
  generating_ = generating;
  emit generatingChanged(generating);
}

}  // namespace kvscope::ui
