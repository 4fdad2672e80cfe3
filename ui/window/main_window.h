// The KVScope main window: chats on the left (sidebar and the current conversation), the
// live KV cache panel on the right, the model in the toolbar, speed and context in the
// status bar. It owns the EngineController and the ChatController (the chats' logic:
// sessions, saving, their requests) and lays out the widgets that show them; it never calls
// the engine itself.
#pragma once

#include <QMainWindow>
#include <QString>

#include <cstdint>
#include <functional>
#include <optional>

#include "window/load_settings.h"
#include "worker/engine_messages.h"

class QAction;
class QLabel;
class QMenu;
class QProgressBar;
class QSplitter;
class QTabWidget;

namespace kvscope::serve {
struct ServerOptions;
}

namespace kvscope::ui {

class ApiServeController;
class ChatController;
class ChatPanel;
class ChatSidebar;
class EngineController;
class FitsPage;
class GqaDemoPage;
class KvQuantDemoPage;
class LanguageMenu;
class LivePanel;
class ModelsPage;
class NoticeBar;
class ServeDialog;

struct AppConfig {
  QString demo_folder;          // where the demo model is written (a cache folder)
  BackendFactory cuda_factory;  // empty: this build has no CUDA backend
  bool cuda_available = false;
  QString cuda_status;  // the CUDA device's name, or why CUDA cannot be used
  QString chats_path;   // the saved chats' database (chat_store.h); "": chats are not saved
};

class MainWindow : public QMainWindow {
  Q_OBJECT

 public:
  explicit MainWindow(AppConfig config, QWidget* parent = nullptr);
  ~MainWindow() override;

  // Loads `path` (empty: the demo model) with the saved load settings.
  void openModel(const QString& path);
  void setPanelVisible(bool visible);

  // The chats: sending, regenerating, selecting, the sessions, the loaded model they use.
  ChatController* chats() const { return chats_; }
  ChatPanel* chatPanel() const { return chat_panel_; }
  ChatSidebar* chatSidebar() const { return sidebar_; }
  LivePanel* livePanel() const { return live_panel_; }
  QTabWidget* pages() const { return pages_; }  // Chat, Models, What fits, Demos
  ModelsPage* modelsPage() const { return models_; }
  FitsPage* fitsPage() const { return fits_; }
  QString noticeText() const;
  // File > "Serve this model" (main_window_serve.cpp): the dialog, made on first use.
  ServeDialog* showServeDialog();
  ApiServeController* apiServer() const { return serving_; }
  QString serveStatus() const;  // the status bar's "serving on ..." ("" while not serving)
  // Shows `text` in the notice bar (an explanation, not an error).
  void showNotice(const QString& text);

  // What closing the window would end now ("" when nothing): replies being written, a
  // model loading.
  QString workInProgress() const;
  // Asked with workInProgress()'s text before the window closes on work; false keeps it
  // open. Default: a question box. Tests replace it.
  void setQuitConfirmation(std::function<bool(const QString&)> confirm);
  // View > Language (window/language.h). When the user accepts its restart offer the window
  // closes (as Quit does, asking about work in progress) and restartRequested() turns true:
  // main() then starts the app again.
  LanguageMenu* languageMenu() const { return language_menu_; }
  bool restartRequested() const { return restart_requested_; }

 signals:
  void modelReady(const kvscope::ui::ModelInfo& info);
  void modelError(const QString& error);
  void speedMeasured(const kvscope::ui::SpeedSample& speed);

 protected:
  void closeEvent(QCloseEvent* event) override;
  void dragEnterEvent(QDragEnterEvent* event) override;
  void dropEvent(QDropEvent* event) override;

 private:
  void build_menus();
  void build_export_menu(QMenu* file);  // main_window_export.cpp
  void build_serving();                 // main_window_serve.cpp
  void start_serving(const serve::ServerOptions& options);
  void update_serve_status(const PanelFrame* frame);
  void export_chat(ChatId chat, bool json);
  void export_stored_chat(ChatId chat);  // a chat this version cannot read, as stored
  void export_panel_snapshot();
  void build_layout();
  QWidget* build_pages(QWidget* chat);  // main_window_pages.cpp
  void show_model_in_pages(const std::optional<ModelInfo>& info);
  void connect_engine();
  void connect_chats();  // main_window_chats.cpp
  void list_stored_chat_state();
  void on_model_loading(const QString& what);
  void on_model_loaded(const ModelInfo& info);
  QString model_details(const ModelInfo& info) const;
  void on_model_failed(const QString& error);
  void on_frame(const PanelFrame& frame);
  void show_open_dialog();
  void show_sampling_dialog();
  void remember_recent(const QString& path);
  void rebuild_recent_menu();
  void update_context_label();
  void update_chat_names();
  void set_model_ready(bool ready);

  AppConfig config_;
  EngineController* engine_;
  LoadSettings load_settings_;
  QVector<GpuPreset> gpus_;
  QString loading_path_;
  bool loading_ = false;  // between modelLoading and modelLoaded / modelFailed
  std::function<bool(const QString&)> confirm_quit_;

  NoticeBar* notice_;
  ChatSidebar* sidebar_;
  ChatPanel* chat_panel_;
  LivePanel* live_panel_;
  QSplitter* splitter_;
  QLabel* model_label_;
  QProgressBar* loading_bar_;
  QLabel* speed_label_;
  QLabel* context_label_;
  // Made after the widgets, so its sessions outlive them (the chat view shows one).
  ChatController* chats_;
  QMenu* recent_menu_;
  QAction* panel_action_;
  LanguageMenu* language_menu_ = nullptr;
  bool restart_requested_ = false;
  QTabWidget* pages_ = nullptr;
  ModelsPage* models_ = nullptr;
  FitsPage* fits_ = nullptr;
  GqaDemoPage* gqa_ = nullptr;
  KvQuantDemoPage* quant_ = nullptr;
  ApiServeController* serving_ = nullptr;  // a child of engine_ (see its constructor)
  ServeDialog* serve_dialog_ = nullptr;
  QLabel* serve_label_ = nullptr;
  std::int64_t api_running_ = 0;  // from the last panel frame
  std::int64_t api_waiting_ = 0;
};

}  // namespace kvscope::ui
