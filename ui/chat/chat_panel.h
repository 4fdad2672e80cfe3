// ChatPanel: the left side of the window for the current chat: system prompt, the
// conversation, prompt-processing progress, the input and the actions (send / stop,
// regenerate, edit and resend, sampling settings).
#pragma once

#include <QPointer>
#include <QWidget>

class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;

namespace kvscope::ui {

class ChatInput;
class ChatSession;
class ChatView;

class ChatPanel : public QWidget {
  Q_OBJECT

 public:
  explicit ChatPanel(QWidget* parent = nullptr);

  void setSession(ChatSession* session);
  void setModelReady(bool ready);
  // Prompt tokens in the cache so far; shown while a long prompt is processed.
  void setPromptProgress(qint64 done, qint64 total);
  // A line above the conversation about the chat itself ("" hides it): e.g. that it was
  // written with another model than the one loaded.
  void setChatNote(const QString& text);
  QString chatNote() const;

  ChatInput* input() const { return input_; }
  ChatView* view() const { return view_; }

 signals:
  void sendRequested(const QString& text);
  void stopRequested();
  void regenerateRequested();
  void samplingRequested();

 private:
  void send();
  void edit_last();
  void update_actions();

  QPointer<ChatSession> session_;
  bool model_ready_ = false;
  QLineEdit* system_prompt_;
  QLabel* note_;
  ChatView* view_;
  QProgressBar* progress_;
  QLabel* editing_;
  ChatInput* input_;
  QPushButton* send_;
  QPushButton* stop_;
  QPushButton* regenerate_;
  QPushButton* edit_;
  QPushButton* sampling_;
};

}  // namespace kvscope::ui
