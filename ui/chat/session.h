// ChatSession: one conversation in the sidebar, as the GUI holds it. It knows its messages,
// system prompt and sampling settings, builds the ChatRequest for the next reply, and takes
// in the worker's streamed text. Views render it; they never edit messages themselves.
#pragma once

#include <QObject>
#include <QString>
#include <QVector>

#include <cstdint>
#include <optional>

#include "worker/engine_messages.h"

namespace kvscope::ui {

struct ChatItem {
  enum class State { Done, Streaming, Stopped, Failed };
  QString role;  // "user" or "assistant"
  QString text;
  State state = State::Done;
  QString note;  // why a reply ended early ("stopped", the engine's error, ...)
};

struct SamplingSettings {
  SamplingParams params;  // params.seed 0: a new random seed for every reply
  std::int64_t max_tokens = 256;
};

class ChatSession : public QObject {
  Q_OBJECT

 public:
  ChatSession(ChatId id, QString title, QObject* parent = nullptr);

  ChatId id() const { return id_; }
  const QString& title() const { return title_; }
  const QString& systemPrompt() const { return system_prompt_; }
  void setSystemPrompt(const QString& text) { system_prompt_ = text; }
  const SamplingSettings& sampling() const { return sampling_; }
  void setSampling(const SamplingSettings& settings) { sampling_ = settings; }
  const QVector<ChatItem>& items() const { return items_; }
  bool generating() const { return generating_; }
  // Tokens of the last prompt plus what was generated from it (status bar).
  qint64 contextUsed() const { return context_used_; }

  // Adds the user's message and an empty reply; returns the request that generates it.
  ChatRequest beginUserTurn(const QString& text);
  // Replaces the last reply with a new empty one; nullopt when there is none to redo.
  std::optional<ChatRequest> beginRegenerate();
  // Removes the last user message and everything after it; returns its text to edit.
  std::optional<QString> takeLastUserMessage();

  // From the worker.
  void replyStarted(qint64 prompt_tokens);
  void appendReplyText(const QString& text, qint64 generated_tokens);
  void finishReply(const ReplyFinished& result);

 signals:
  void itemsReset();       // messages added or removed
  void lastItemChanged();  // the last message's text or state changed
  void generatingChanged(bool generating);
  void titleChanged(const QString& title);
  void contextUsedChanged(qint64 tokens);

 private:
  ChatRequest request_for_last_reply();
  void set_generating(bool generating);

  ChatId id_;
  QString title_;
  bool titled_ = false;
  QString system_prompt_;
  SamplingSettings sampling_;
  QVector<ChatItem> items_;
  bool generating_ = false;
  qint64 prompt_tokens_ = 0;
  qint64 context_used_ = 0;
  std::uint64_t attempts_ = 0;  // replies requested, varies a fixed seed on regenerate
};

}  // namespace kvscope::ui
