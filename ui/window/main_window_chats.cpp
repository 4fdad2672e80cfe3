// MainWindow: the chats' widgets (sidebar, current chat) wired to the ChatController, and
// the dialogs that change how the next reply or model is made.
#include <QLabel>
#include <QSettings>
#include <QStatusBar>

#include <utility>

#include "chat/chat_controller.h"
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

namespace kvscope::ui {

void MainWindow::connect_chats() {
  connect(sidebar_, &ChatSidebar::currentChanged, chats_, &ChatController::selectChat);
  connect(sidebar_, &ChatSidebar::newChatRequested, chats_, [this] { chats_->newChat(); });
  connect(sidebar_, &ChatSidebar::deleteChatRequested, chats_, &ChatController::deleteChat);
  connect(sidebar_, &ChatSidebar::undoDeleteRequested, chats_, &ChatController::undoDelete);
  connect(sidebar_, &ChatSidebar::exportRequested, this, &MainWindow::export_chat);
  connect(sidebar_, &ChatSidebar::exportUnreadableRequested, this, &MainWindow::export_stored_chat);
  connect(sidebar_, &ChatSidebar::undoExpired, chats_, &ChatController::finishDelete);
  connect(sidebar_, &ChatSidebar::renameRequested, chats_, &ChatController::renameChat);
  connect(chat_panel_, &ChatPanel::sendRequested, chats_, &ChatController::sendMessage);
  connect(chat_panel_, &ChatPanel::stopRequested, chats_, &ChatController::stopCurrent);
  connect(chat_panel_, &ChatPanel::regenerateRequested, chats_, &ChatController::regenerate);
  connect(chat_panel_, &ChatPanel::samplingRequested, this, &MainWindow::show_sampling_dialog);

  connect(chats_, &ChatController::sessionAdded, sidebar_, &ChatSidebar::addSession);
  connect(chats_, &ChatController::sessionRemoved, sidebar_, &ChatSidebar::removeSession);
  connect(chats_, &ChatController::currentChanged, this, [this](ChatSession* s) {
    sidebar_->setCurrent(s->id());
    chat_panel_->setSession(s);
    update_context_label();
  });
  connect(chats_, &ChatController::deleteUndoable, sidebar_, &ChatSidebar::offerUndo);
  connect(chats_, &ChatController::deleteUndone, sidebar_, &ChatSidebar::hideUndo);
  connect(chats_, &ChatController::chatNamesChanged, this, &MainWindow::update_chat_names);
  connect(chats_, &ChatController::contextUsedChanged, this, &MainWindow::update_context_label);
  connect(chats_, &ChatController::chatNoteChanged, chat_panel_, &ChatPanel::setChatNote);
  connect(chats_, &ChatController::promptProgress, chat_panel_, &ChatPanel::setPromptProgress);
  connect(chats_, &ChatController::problem, notice_, &NoticeBar::showError);
  connect(chats_, &ChatController::replyFinished, this, [this](const ReplyFinished& r) {
    if (r.reused_tokens <= 0) return;
    statusBar()->showMessage(
        tr("%1 of the prompt's %2 tokens came from the chat's cached blocks, not recomputed")
            .arg(r.reused_tokens)
            .arg(r.prompt_tokens),
        8000);
  });
}

// The saved chats restore() could not open stay in the list, greyed; a read-only store says
// so under it for as long as the window lives (the notice bar can be closed).
void MainWindow::list_stored_chat_state() {
  const ChatStore* store = chats_->store();
  if (!store) return;
  for (const auto& [id, chat] : store->unreadable()) {
    sidebar_->addUnreadable(id, chat.title, chat.reason);
  }
  if (store->readOnly()) {
    sidebar_->setReadOnlyNote(tr("Read-only \u2014 %1. New chats and replies are not saved.")
                                  .arg(store->readOnlyReason()));
  }
}

void MainWindow::show_open_dialog() {
  const QString last = QSettings().value(kLastModelKey).toString();
  const CudaSupport cuda{static_cast<bool>(config_.cuda_factory), config_.cuda_available,
                         config_.cuda_status};
  LoadDialog dialog(loading_path_.isEmpty() ? last : loading_path_, load_settings_, gpus_, cuda,
                    this);
  if (dialog.exec() != QDialog::Accepted) return;
  load_settings_ = dialog.settings();
  QSettings settings;
  load_settings_.write(settings);
  openModel(dialog.path());
}

void MainWindow::show_sampling_dialog() {
  ChatSession* s = chats_->currentSession();
  if (!s) return;
  const std::optional<ModelInfo>& model = chats_->model();
  SamplingDialog dialog(s->sampling(), model ? model->context_length : 4096,
                        model ? model->sampling_defaults : SamplingDefaults{}, this);
  if (dialog.exec() == QDialog::Accepted) s->setSampling(dialog.settings());
}

void MainWindow::update_context_label() {
  const ChatSession* s = chats_->currentSession();
  const std::optional<ModelInfo>& model = chats_->model();
  const qint64 used = s ? s->contextUsed() : 0;
  context_label_->setText(model ? tr("context %1 / %2").arg(used).arg(model->context_length)
                                : QString());
}

void MainWindow::update_chat_names() {
  live_panel_->setChatNames(chats_->chatNames());
}

}  // namespace kvscope::ui
