// ChatSession: one conversation in the sidebar, as the GUI holds it. It knows its messages,
// system prompt and sampling settings, builds the ChatRequest for the next reply, and takes
// in the worker's streamed text. Views render it; they never edit messages themselves.
#pragma once

#include <QElapsedTimer>
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
  // Replies only (0 for the user's messages and replies still streaming):
  qint64 prompt_tokens = 0;   // the prompt the reply was generated from
  qint64 tokens = 0;          // tokens the reply holds
  double decode_seconds = 0;  // from its first streamed text to its end
  QString finish_reason;      // finish_reason_name(): "end of generation", "length", ...
  qint64 created_ms = 0;      // ms since the epoch (UTC) when the message was added

  // Decode speed of a finished reply: the tokens after the first over the time they took.
  double tokensPerSecond() const {
    return decode_seconds > 0 && tokens > 1 ? static_cast<double>(tokens - 1) / decode_seconds
                                            : 0.0;
  }
};

// "done", "stopped", "failed", "streaming": how saved and exported chats name a state.
QString chat_item_state_name(ChatItem::State state);

// The model a chat's replies came from, as found on disk when it was loaded: a chat opened
// later with another file loaded (or this one changed) says so. Empty path: the demo model.
struct ModelRef {
  QString path;
  QString name;
  qint64 size = -1;  // bytes; -1 unknown (a folder, or not saved)
  qint64 mtime_ms = 0;

  bool isSet() const { return !name.isEmpty(); }
  bool sameFile(const ModelRef& o) const {
    return path == o.path && size == o.size && mtime_ms == o.mtime_ms;
  }
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
  // A title the user gave (or the first message's start): kept from then on.
  void setTitle(const QString& title);
  bool titled() const { return titled_; }
  const QString& systemPrompt() const { return system_prompt_; }
  void setSystemPrompt(const QString& text);
  const SamplingSettings& sampling() const { return sampling_; }
  void setSampling(const SamplingSettings& settings);
  // The model the chat's replies come from (set before each reply is requested).
  const ModelRef& model() const { return model_; }
  void setModel(const ModelRef& model);
  qint64 createdMs() const { return created_ms_; }
  const QVector<ChatItem>& items() const { return items_; }
  // A saved chat coming back (chat_store.h): its messages, none streaming, and when it began.
  void restore(QVector<ChatItem> items, qint64 created_ms);
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
  // Something a saved copy holds changed (title, settings, model, a message added, removed
  // or finished); not emitted for each piece of streamed text.
  void contentChanged();

 private:
  ChatRequest request_for_last_reply();
  void set_generating(bool generating);
  void push_item(const QString& role, const QString& text, ChatItem::State state);

  ChatId id_;
  QString title_;
  bool titled_ = false;
  QString system_prompt_;
  SamplingSettings sampling_;
  ModelRef model_;
  qint64 created_ms_ = 0;
  QVector<ChatItem> items_;
  QElapsedTimer decode_clock_;  // started by the reply's first text
  bool generating_ = false;
  qint64 prompt_tokens_ = 0;
  qint64 context_used_ = 0;
  std::uint64_t attempts_ = 0;  // replies requested, varies a fixed seed on regenerate
};

}  // namespace kvscope::ui
