// MainWindow: the chats (sidebar, current chat, sending, regenerating, stopping, saving,
// deleting with undo) and the dialogs that change how the next reply or model is made.
#include <QDateTime>
#include <QFileInfo>
#include <QLabel>
#include <QSettings>

#include <algorithm>
#include <utility>

#include "chat/chat_panel.h"
#include "chat/chat_store.h"
#include "chat/session.h"
#include "chat/sidebar.h"
#include "panel/live_panel.h"
#include "window/load_dialog.h"
#include "window/main_window.h"
#include "window/notice_bar.h"
#include "window/sampling_dialog.h"
#include "window/settings_keys.h"
#include "worker/engine_controller.h"

namespace kvscope::ui {

void MainWindow::show_open_dialog() {
  const QString last = QSettings().value(kLastModelKey).toString();
  LoadDialog dialog(loading_path_.isEmpty() ? last : loading_path_, load_settings_, gpus_,
                    config_.cuda_available, config_.cuda_status, this);
  if (dialog.exec() != QDialog::Accepted) return;
  load_settings_ = dialog.settings();
  QSettings settings;
  load_settings_.write(settings);
  openModel(dialog.path());
}

void MainWindow::show_sampling_dialog() {
  ChatSession* s = currentSession();
  if (!s) return;
  SamplingDialog dialog(s->sampling(), model_ ? model_->context_length : 4096,
                        model_ ? model_->sampling_defaults : SamplingDefaults{}, this);
  if (dialog.exec() == QDialog::Accepted) s->setSampling(dialog.settings());
}

void MainWindow::update_context_label() {
  const ChatSession* s = currentSession();
  const qint64 used = s ? s->contextUsed() : 0;
  context_label_->setText(model_ ? tr("context %1 / %2").arg(used).arg(model_->context_length)
                                 : QString());
}

void MainWindow::update_chat_names() {
  std::map<ChatId, QString> names;
  for (const auto& [id, s] : sessions_) names[id] = s->title();
  live_panel_->setChatNames(std::move(names));
}

}  // namespace kvscope::ui
