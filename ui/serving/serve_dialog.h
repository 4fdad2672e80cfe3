// ServeDialog: File > "Serve this model". Port (8080 by default; 0 takes any free one), the
// address (this computer only), an optional API key, a Start/Stop button and, while
// serving, the URL with a Copy button. It only asks: the main window starts the server
// (it knows the model), and the dialog follows the ApiServeController's signals.
#pragma once

#include <QDialog>

#include "serve/api_server.h"

class QLabel;
class QLineEdit;
class QPushButton;
class QSpinBox;

namespace kvscope::ui {

class ApiServeController;

class ServeDialog : public QDialog {
  Q_OBJECT

 public:
  explicit ServeDialog(ApiServeController* server, QWidget* parent = nullptr);

  QSpinBox* portBox() const { return port_; }
  QLineEdit* keyEdit() const { return key_; }
  QPushButton* toggleButton() const { return toggle_; }
  QString url() const;

 signals:
  void startRequested(const kvscope::serve::ServerOptions& options);

 private:
  void toggle();
  void show_state();

  ApiServeController* server_;
  QSpinBox* port_;
  QLineEdit* key_;
  QPushButton* toggle_;
  QLineEdit* url_;
  QPushButton* copy_;
  QLabel* note_;
};

}  // namespace kvscope::ui
