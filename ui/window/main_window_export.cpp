// MainWindow: File > Export: the current chat as Markdown or JSON, the live panel's numbers
// as a panel snapshot (the format kvscope-cli run --snapshot writes), the block map as PNG.
// Each chart saves itself from its own context menu (widgets/chart_frame.h).
#include <QAction>
#include <QFileInfo>
#include <QMenu>

#include "chat/chat_controller.h"
#include "chat/chat_export.h"
#include "chat/chat_store.h"
#include "chat/session.h"
#include "kv/panel_snapshot_json.h"
#include "panel/block_map_widget.h"
#include "panel/live_panel.h"
#include "run/memory_terms.h"
#include "widgets/export_file.h"
#include "window/main_window.h"

namespace kvscope::ui {
namespace {

// A file name from a chat title: letters, digits and dashes.
QString file_stem(const QString& title) {
  QString stem;
  for (const QChar c : title.simplified()) stem += c.isLetterOrNumber() ? c : QLatin1Char('-');
  while (stem.contains(QStringLiteral("--")))
    stem.replace(QStringLiteral("--"), QStringLiteral("-"));
  stem = stem.left(60);
  return stem.isEmpty() || stem == QLatin1String("-") ? QStringLiteral("chat") : stem;
}

}  // namespace

void MainWindow::build_export_menu(QMenu* file) {
  QMenu* menu = file->addMenu(tr("&Export"));
  auto add = [this, menu](const char* name, const QString& text, auto slot) {
    QAction* a = menu->addAction(text, this, slot);
    a->setObjectName(QLatin1String(name));
  };
  add("exportChatMarkdown", tr("Chat as &Markdown\u2026"),
      [this] { export_chat(chats_->currentChat(), false); });
  add("exportChatJson", tr("Chat as &JSON\u2026"),
      [this] { export_chat(chats_->currentChat(), true); });
  menu->addSeparator();
  add("exportPanelSnapshot", tr("&Panel snapshot (JSON)\u2026"),
      [this] { export_panel_snapshot(); });
  add("exportBlockMap", tr("&Block map (PNG)\u2026"), [this] {
    if (QAction* a = live_panel_->blockMap()->findChild<QAction*>(QStringLiteral("exportPng"))) {
      a->trigger();
    }
  });
}

void MainWindow::export_chat(ChatId chat, bool json) {
  const ChatSession* s = chats_->session(chat);
  if (!s) return;
  const QString stem = file_stem(s->title());
  if (json) {
    export_with_dialog(this, tr("Export chat as JSON"), stem + QStringLiteral(".json"),
                       tr("JSON (*.json)"),
                       [s](const QString& path) { return save_text_file(path, chat_json(*s)); });
  } else {
    export_with_dialog(
        this, tr("Export chat as Markdown"), stem + QStringLiteral(".md"), tr("Markdown (*.md)"),
        [s](const QString& path) { return save_text_file(path, chat_markdown(*s).toUtf8()); });
  }
}

// A chat this version cannot read: its rows as the database holds them, every column.
void MainWindow::export_stored_chat(ChatId chat) {
  const ChatStore* store = chats_->store();
  if (!store || store->unreadable().count(chat) == 0) return;
  const QString stem = file_stem(store->unreadable().at(chat).title);
  export_with_dialog(this, tr("Export chat as stored (JSON)"), stem + QStringLiteral(".json"),
                     tr("JSON (*.json)"), [store, chat](const QString& path) {
                       QString error;
                       const std::optional<QByteArray> json = store->rawChatJson(chat, &error);
                       return json ? save_text_file(path, *json) : error;
                     });
}

// The frame the panel drew last; before any, a box says there is nothing to save yet.
void MainWindow::export_panel_snapshot() {
  const std::optional<PanelFrame>& frame = live_panel_->lastFrame();
  export_with_dialog(this, tr("Export panel snapshot"), QStringLiteral("panel-snapshot.json"),
                     tr("JSON (*.json)"), [this, &frame](const QString& path) {
                       if (!frame) return tr("The panel has no frame yet: load a model first.");
                       PanelSnapshotContext context;
                       const std::optional<ModelInfo>& model = chats_->model();
                       context.model = model ? model->name.toStdString() : std::string();
                       set_memory_terms(context, frame->memory, frame->split);
                       return save_text_file(path, QByteArray::fromStdString(
                                                       panel_snapshot_json(frame->cache, context)));
                     });
}

}  // namespace kvscope::ui
