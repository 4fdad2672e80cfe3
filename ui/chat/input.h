// ChatInput: where the user writes. Enter sends, Shift+Enter starts a new line, Esc stops
// the reply being generated.
#pragma once

#include <QPlainTextEdit>

namespace kvscope::ui {

class ChatInput : public QPlainTextEdit {
  Q_OBJECT

 public:
  explicit ChatInput(QWidget* parent = nullptr);

  QSize sizeHint() const override;

 signals:
  void sendRequested();
  void stopRequested();

 protected:
  void keyPressEvent(QKeyEvent* event) override;
};

}  // namespace kvscope::ui
