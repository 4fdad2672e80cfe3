// The KVScope main window. For now it shows what the app will be and which backends this
// machine has; the chat and the live KV panel arrive with the GUI issue.
#pragma once

#include <QMainWindow>

namespace kvscope::ui {

class MainWindow : public QMainWindow {
  Q_OBJECT

 public:
  explicit MainWindow(QWidget* parent = nullptr);
};

}  // namespace kvscope::ui
