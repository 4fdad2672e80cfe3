// NoticeBar: a dismissable message across the top of the window (a model that failed to
// load, an engine error). Unlike a modal box it never blocks the window, the engine or a
// test driving the app.
#pragma once

#include <QFrame>

class QLabel;
class QToolButton;

namespace kvscope::ui {

class NoticeBar : public QFrame {
  Q_OBJECT

 public:
  explicit NoticeBar(QWidget* parent = nullptr);

  void showError(const QString& text);
  void showInfo(const QString& text);
  QString text() const;

 protected:
  void changeEvent(QEvent* event) override;

 private:
  void show_message(const QString& text, bool error);
  void restyle();

  QLabel* label_;
  QToolButton* close_;
  bool error_ = false;
};

}  // namespace kvscope::ui
