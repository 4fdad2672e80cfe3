#include "chat/input.h"

#include <QKeyEvent>

namespace kvscope::ui {

ChatInput::ChatInput(QWidget* parent) : QPlainTextEdit(parent) {
  setPlaceholderText(tr("Message \u2014 Enter sends, Shift+Enter adds a line, Esc stops"));
  setTabChangesFocus(true);
}

QSize ChatInput::sizeHint() const {
  const int lines = 3;
  return {QPlainTextEdit::sizeHint().width(),
          fontMetrics().lineSpacing() * lines + 2 * frameWidth() +
              static_cast<int>(2 * document()->documentMargin())};
}

void ChatInput::keyPressEvent(QKeyEvent* event) {
  const bool enter = event->key() == Qt::Key_Return || event->key() == Qt::Key_Enter;
  if (enter && !(event->modifiers() & Qt::ShiftModifier)) {
    emit sendRequested();
    return;
  }
  if (enter) {
    insertPlainText(QStringLiteral("\n"));
    return;
  }
  if (event->key() == Qt::Key_Escape) {
    emit stopRequested();
    return;
  }
  QPlainTextEdit::keyPressEvent(event);
}

}  // namespace kvscope::ui
