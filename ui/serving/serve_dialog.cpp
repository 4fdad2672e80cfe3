#include "serving/serve_dialog.h"

#include <QApplication>
#include <QClipboard>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>

#include "serving/api_serve_controller.h"

namespace kvscope::ui {

ServeDialog::ServeDialog(ApiServeController* server, QWidget* parent)
    : QDialog(parent),
      server_(server),
      port_(new QSpinBox(this)),
      key_(new QLineEdit(this)),
      toggle_(new QPushButton(this)),
      url_(new QLineEdit(this)),
      copy_(new QPushButton(tr("Copy"), this)),
      note_(new QLabel(this)) {
  setWindowTitle(tr("Serve this model"));
  port_->setRange(0, 65535);
  port_->setValue(8080);
  port_->setSpecialValueText(tr("any free port"));
  key_->setPlaceholderText(tr("none: any program on this computer may use it"));
  url_->setReadOnly(true);
  note_->setWordWrap(true);
  note_->setText(
      tr("An OpenAI-compatible API (/v1/chat/completions, /v1/completions, "
         "/v1/models, /metrics) on this computer only. Its requests share the "
         "engine with the chats, and the live panel shows each one as \"API #n\"."));

  auto* url_row = new QHBoxLayout;
  url_row->addWidget(url_, 1);
  url_row->addWidget(copy_);
  auto* form = new QFormLayout(this);
  form->addRow(note_);
  form->addRow(tr("Address:"), new QLabel(QStringLiteral("127.0.0.1"), this));
  form->addRow(tr("Port:"), port_);
  form->addRow(tr("API key:"), key_);
  form->addRow(tr("URL:"), url_row);
  form->addRow(toggle_);

  connect(toggle_, &QPushButton::clicked, this, &ServeDialog::toggle);
  connect(copy_, &QPushButton::clicked, this,
          [this] { QApplication::clipboard()->setText(url_->text()); });
  connect(server_, &ApiServeController::started, this, [this] { show_state(); });
  connect(server_, &ApiServeController::stopped, this, [this] { show_state(); });
  connect(server_, &ApiServeController::failed, this, [this] { show_state(); });
  show_state();
}

QString ServeDialog::url() const {
  return url_->text();
}

void ServeDialog::toggle() {
  if (server_->serving()) {
    server_->stop();
    toggle_->setEnabled(false);  // until stopped()
    return;
  }
  serve::ServerOptions options;
  options.port = port_->value();
  options.api_key = key_->text().trimmed().toStdString();
  toggle_->setEnabled(false);  // until started() or failed()
  emit startRequested(options);
  if (!server_->serving()) show_state();  // refused at once (no model)
}

// The controls follow the server: settings only while stopped, the URL only while serving.
void ServeDialog::show_state() {
  const bool serving = server_->serving();
  toggle_->setEnabled(true);
  toggle_->setText(serving ? tr("Stop serving") : tr("Start serving"));
  port_->setEnabled(!serving);
  key_->setEnabled(!serving);
  url_->setText(server_->url());
  copy_->setEnabled(!server_->url().isEmpty());
}

}  // namespace kvscope::ui
