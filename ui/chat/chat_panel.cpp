#include "chat/chat_panel.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QVBoxLayout>

#include "chat/input.h"
#include "chat/session.h"
#include "chat/view.h"

namespace kvscope::ui {

ChatPanel::ChatPanel(QWidget* parent)
    : QWidget(parent),
      system_prompt_(new QLineEdit(this)),
      note_(new QLabel(this)),
      view_(new ChatView(this)),
      progress_(new QProgressBar(this)),
      editing_(new QLabel(tr("Editing your last message \u2014 Enter sends it again"), this)),
      input_(new ChatInput(this)),
      send_(new QPushButton(tr("Send"), this)),
      stop_(new QPushButton(tr("Stop"), this)),
      regenerate_(new QPushButton(tr("Regenerate"), this)),
      edit_(new QPushButton(tr("Edit last"), this)),
      sampling_(new QPushButton(tr("Sampling\u2026"), this)) {
  system_prompt_->setPlaceholderText(tr("System prompt (optional)"));
  system_prompt_->setClearButtonEnabled(true);
  progress_->setVisible(false);
  progress_->setFormat(tr("Reading the prompt: %v / %m tokens"));
  editing_->setVisible(false);
  note_->setVisible(false);
  note_->setWordWrap(true);
  note_->setTextFormat(Qt::PlainText);
  note_->setContentsMargins(4, 2, 4, 2);
  send_->setDefault(true);
  stop_->setToolTip(tr("Stop the reply (Esc); the text so far is kept"));
  regenerate_->setToolTip(tr("Generate the last reply again from the same prompt"));
  edit_->setToolTip(tr("Put your last message back in the input to change and resend it"));

  auto* buttons = new QHBoxLayout;
  buttons->addWidget(edit_);
  buttons->addWidget(regenerate_);
  buttons->addWidget(sampling_);
  buttons->addStretch(1);
  buttons->addWidget(stop_);
  buttons->addWidget(send_);

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(system_prompt_);
  layout->addWidget(note_);
  layout->addWidget(view_, 1);
  layout->addWidget(progress_);
  layout->addWidget(editing_);
  layout->addWidget(input_);
  layout->addLayout(buttons);

  connect(input_, &ChatInput::sendRequested, this, &ChatPanel::send);
  connect(input_, &ChatInput::stopRequested, this, &ChatPanel::stopRequested);
  connect(send_, &QPushButton::clicked, this, &ChatPanel::send);
  connect(stop_, &QPushButton::clicked, this, &ChatPanel::stopRequested);
  connect(regenerate_, &QPushButton::clicked, this, &ChatPanel::regenerateRequested);
  connect(edit_, &QPushButton::clicked, this, &ChatPanel::edit_last);
  connect(sampling_, &QPushButton::clicked, this, &ChatPanel::samplingRequested);
  connect(system_prompt_, &QLineEdit::textEdited, this, [this](const QString& text) {
    if (ChatSession* s = session_.data()) s->setSystemPrompt(text);
  });
  update_actions();
}

void ChatPanel::setSession(ChatSession* session) {
  if (session_) disconnect(session_, nullptr, this, nullptr);
  session_ = session;
  view_->setSession(session);
  system_prompt_->setText(session ? session->systemPrompt() : QString());
  progress_->setVisible(false);
  editing_->setVisible(false);
  if (session_) {
    connect(session_, &ChatSession::generatingChanged, this, [this](bool generating) {
      if (!generating) progress_->setVisible(false);
      update_actions();
    });
    connect(session_, &ChatSession::itemsReset, this, &ChatPanel::update_actions);
  }
  update_actions();
  input_->setFocus();
}

void ChatPanel::setModelReady(bool ready) {
  model_ready_ = ready;
  update_actions();
}

void ChatPanel::setPromptProgress(qint64 done, qint64 total) {
  // Short prompts are read in one step: a bar would only flicker.
  constexpr qint64 kShowFrom = 256;
  progress_->setVisible(total >= kShowFrom && done < total);
  progress_->setRange(0, static_cast<int>(total));
  progress_->setValue(static_cast<int>(done));
}

void ChatPanel::setChatNote(const QString& text) {
  note_->setText(text);
  note_->setVisible(!text.isEmpty());
}

QString ChatPanel::chatNote() const {
  return note_->text();
}

void ChatPanel::send() {
  const QString text = input_->toPlainText();
  const ChatSession* s = session_.data();
  if (s == nullptr || s->generating() || !model_ready_ || text.trimmed().isEmpty()) return;
  input_->clear();
  editing_->setVisible(false);
  emit sendRequested(text);
}

void ChatPanel::edit_last() {
  ChatSession* s = session_.data();
  if (s == nullptr) return;
  if (auto text = s->takeLastUserMessage()) {
    input_->setPlainText(*text);
    input_->moveCursor(QTextCursor::End);
    input_->setFocus();
    editing_->setVisible(true);
  }
}

void ChatPanel::update_actions() {
  const ChatSession* s = session_.data();
  bool generating = false, has_items = false, has_reply = false;
  if (s != nullptr) {
    generating = s->generating();
    has_items = !s->items().isEmpty();
    has_reply = has_items && s->items().constLast().role == QLatin1String("assistant");
  }
  send_->setEnabled(s != nullptr && model_ready_ && !generating);
  stop_->setEnabled(generating);
  regenerate_->setEnabled(model_ready_ && !generating && has_reply);
  edit_->setEnabled(!generating && has_items);
  system_prompt_->setEnabled(s != nullptr);
}

}  // namespace kvscope::ui
