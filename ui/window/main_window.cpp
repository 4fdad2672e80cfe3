#include "window/main_window.h"

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileInfo>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QProgressBar>
#include <QSettings>
#include <QSplitter>
#include <QStatusBar>
#include <QToolBar>
#include <QToolButton>
#include <QVBoxLayout>

#include "chat/chat_controller.h"
#include "chat/chat_panel.h"
#include "chat/sidebar.h"
#include "chat/view.h"
#include "demos/quant/quant_page.h"
#include "panel/live_panel.h"
#include "window/app_palette.h"
#include "window/language.h"
#include "window/notice_bar.h"
#include "window/sampling_dialog.h"
#include "window/settings_keys.h"
#include "worker/builtin_model.h"
#include "worker/engine_controller.h"
#include "worker/engine_worker.h"

namespace kvscope::ui {

MainWindow::MainWindow(AppConfig config, QWidget* parent)
    : QMainWindow(parent),
      config_(std::move(config)),
      engine_(new EngineController(config_.demo_folder, this)),
      notice_(new NoticeBar(this)),
      sidebar_(new ChatSidebar(this)),
      chat_panel_(new ChatPanel(this)),
      live_panel_(new LivePanel(this)),
      splitter_(new QSplitter(Qt::Horizontal, this)),
      model_label_(new QLabel(this)),
      loading_bar_(new QProgressBar(this)),
      speed_label_(new QLabel(this)),
      context_label_(new QLabel(this)),
      chats_(new ChatController(engine_, this)) {
  setWindowTitle(QStringLiteral("KVScope"));
  setAcceptDrops(true);
  QSettings settings;
  QStringList settings_problems;
  load_settings_ = LoadSettings::read(settings, &settings_problems);
  QString presets_error;
  gpus_ = load_gpu_catalogue(&presets_error);
  build_menus();
  build_layout();
  connect_engine();
  connect_chats();
  build_serving();
  chats_->restore(config_.chats_path, &settings_problems);
  list_stored_chat_state();
  chats_->newChat();
  set_model_ready(false);
  if (!settings_problems.isEmpty()) notice_->showError(settings_problems.join(QLatin1Char('\n')));
  resize(1280, 800);
}

MainWindow::~MainWindow() = default;

void MainWindow::build_menus() {
  QMenu* file = menuBar()->addMenu(tr("&File"));
  QAction* open = file->addAction(tr("&Open model\u2026"), QKeySequence::Open, this,
                                  &MainWindow::show_open_dialog);
  // The toolbar button's text and tooltip, without the menu's mnemonic (a translation's
  // "(&O)" would show as "(O)" there).
  open->setIconText(tr("Open model\u2026"));
  open->setToolTip(open->iconText());
  recent_menu_ = file->addMenu(tr("Recent models"));
  file->addAction(tr("Load the &demo model"), this, [this] { openModel({}); });
  file->addSeparator();
  build_export_menu(file);
  file->addAction(tr("&Serve this model\u2026"), this, [this] { showServeDialog(); });
  file->addSeparator();
  file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);
  rebuild_recent_menu();

  QMenu* chat = menuBar()->addMenu(tr("&Chat"));
  chat->addAction(tr("&New chat"), QKeySequence::New, this, [this] { chats_->newChat(); });
  chat->addAction(tr("&Regenerate"), QKeySequence(Qt::CTRL | Qt::Key_R), this,
                  [this] { chats_->regenerate(); });
  chat->addAction(tr("&Stop"), this, [this] { chats_->stopCurrent(); });
  chat->addAction(tr("S&ampling\u2026"), this, &MainWindow::show_sampling_dialog);
  chat->addSeparator();
  chat->addAction(tr("Re&name chat"), QKeySequence(Qt::Key_F2), this,
                  [this] { sidebar_->editTitle(chats_->currentChat()); });
  chat->addAction(tr("&Delete chat"), this, [this] { chats_->deleteChat(chats_->currentChat()); });

  QMenu* view = menuBar()->addMenu(tr("&View"));
  panel_action_ = view->addAction(tr("&Live KV panel"));
  panel_action_->setCheckable(true);
  panel_action_->setChecked(true);
  panel_action_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_L));
  connect(panel_action_, &QAction::toggled, this, &MainWindow::setPanelVisible);
  QAction* dark = view->addAction(tr("&Dark theme"));
  dark->setCheckable(true);
  dark->setChecked(is_dark(QApplication::palette()));
  connect(dark, &QAction::toggled, this, [](bool on) {
    QApplication::setPalette(on ? dark_palette() : light_palette());
    QSettings().setValue(kDarkThemeKey, on);
  });
  language_menu_ = new LanguageMenu(this);
  view->addMenu(language_menu_);
  connect(language_menu_, &LanguageMenu::restartRequested, this, [this] {
    restart_requested_ = true;
    if (!close()) restart_requested_ = false;  // the user kept the window for its work
  });

  auto* bar = addToolBar(tr("Model"));
  bar->setMovable(false);
  auto* open_button = new QToolButton(bar);
  open_button->setDefaultAction(open);
  open_button->setToolButtonStyle(Qt::ToolButtonTextOnly);
  QFont bold = open_button->font();
  bold.setBold(true);
  open_button->setFont(bold);
  bar->addWidget(open_button);
  bar->addSeparator();
  model_label_->setObjectName(QStringLiteral("modelLabel"));
  model_label_->setTextFormat(Qt::RichText);
  model_label_->setContentsMargins(6, 0, 6, 0);
  bar->addWidget(model_label_);
}

void MainWindow::build_layout() {
  auto* left = new QWidget(splitter_);
  auto* left_layout = new QHBoxLayout(left);
  left_layout->setContentsMargins(6, 6, 0, 6);
  auto* chats = new QSplitter(Qt::Horizontal, left);
  chats->addWidget(sidebar_);
  chats->addWidget(chat_panel_);
  chats->setStretchFactor(1, 1);
  chats->setSizes({170, 450});
  left_layout->addWidget(chats);
  auto* right = new QWidget(splitter_);
  auto* right_layout = new QVBoxLayout(right);
  right_layout->setContentsMargins(0, 6, 6, 6);
  right_layout->addWidget(live_panel_);
  splitter_->addWidget(left);
  splitter_->addWidget(right);
  splitter_->setStretchFactor(0, 1);
  splitter_->setStretchFactor(1, 1);
  splitter_->setSizes({620, 660});

  auto* central = new QWidget(this);
  auto* layout = new QVBoxLayout(central);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(0);
  layout->addWidget(notice_);
  layout->addWidget(build_pages(splitter_), 1);
  setCentralWidget(central);

  loading_bar_->setRange(0, 0);  // the engine reports no load progress: a busy bar
  loading_bar_->setMaximumWidth(160);
  loading_bar_->setVisible(false);
  statusBar()->addPermanentWidget(loading_bar_);
  // Wide enough for their longest text, so a long message on the left never clips them.
  speed_label_->setMinimumWidth(fontMetrics().horizontalAdvance(tr("88,888.8 tokens/s")) + 8);
  context_label_->setMinimumWidth(fontMetrics().horizontalAdvance(tr("context 888,888 / 888,888")) +
                                  8);
  context_label_->setAlignment(Qt::AlignRight | Qt::AlignVCenter);
  statusBar()->addPermanentWidget(speed_label_);
  statusBar()->addPermanentWidget(context_label_);

  connect(chat_panel_->view(), &ChatView::linkRefused, this, [this](const QUrl& url) {
    notice_->showInfo(tr("Links from the chat open only when they are web (http/https) links; "
                         "not followed: %1")
                          .arg(url.toDisplayString().left(200)));
  });
}

void MainWindow::connect_engine() {
  const EngineWorker* worker = engine_->worker();
  connect(worker, &EngineWorker::modelLoading, this, &MainWindow::on_model_loading);
  connect(worker, &EngineWorker::modelLoaded, this, &MainWindow::on_model_loaded);
  connect(worker, &EngineWorker::modelFailed, this, &MainWindow::on_model_failed);
  connect(worker, &EngineWorker::frameReady, this, &MainWindow::on_frame);
  connect(worker, &EngineWorker::speedMeasured, this, [this](const SpeedSample& s) {
    speed_label_->setText(tr("%1 tokens/s").arg(s.decode_tokens_per_s, 0, 'f', 1));
    emit speedMeasured(s);
  });
}

void MainWindow::openModel(const QString& path) {
  loading_path_ = path;
  EngineOptions options;
  try {
    options = engine_options(load_settings_, gpus_, config_.cuda_factory);
  } catch (const std::exception& e) {
    on_model_failed(QString::fromUtf8(e.what()));
    return;
  }
  set_model_ready(false);
  engine_->loadModel({path, std::move(options)});
}

void MainWindow::on_model_loading(const QString& what) {
  loading_ = true;
  loading_bar_->setVisible(true);
  statusBar()->showMessage(tr("Loading %1\u2026").arg(what));
  model_label_->setText(tr("Loading %1\u2026").arg(what.toHtmlEscaped()));
}

void MainWindow::on_model_loaded(const ModelInfo& info) {
  chats_->setModel(info);
  loading_ = false;
  show_model_in_pages(chats_->model());
  loading_bar_->setVisible(false);
  statusBar()->clearMessage();
  live_panel_->reset();
  speed_label_->clear();
  const QString name = info.name.toHtmlEscaped();
  const QString details = model_details(info);
  model_label_->setText(
      info.demo ? QStringLiteral("<b style='color:#e07b00'>%1</b> &nbsp;%2")
                      .arg(name, details.toHtmlEscaped())
                : QStringLiteral("<b>%1</b> &nbsp;%2").arg(name, details.toHtmlEscaped()));
  model_label_->setToolTip(info.demo ? builtin_model_description() : info.path);
  if (!info.backend_note.isEmpty())
    statusBar()->showMessage(backend_note_label(info.backend_note), 15000);
  QSettings settings;
  settings.setValue(kLastModelKey, info.demo ? QString() : info.path);
  if (!info.demo) remember_recent(info.path);
  set_model_ready(true);
  update_context_label();
  emit modelReady(info);
}

// "llama · 5 layers · context 512 · CPU (2 threads) · template chatml"; a model split between
// GPU and CPU says how many of its layers run on the GPU ("24/40 layers on the GPU").
QString MainWindow::model_details(const ModelInfo& info) const {
  const QString arch = QString::fromStdString(info.spec.architecture);
  const QString family = template_label(info.template_name);
  if (info.gpu_layers > 0) {
    return tr("%1 \u00b7 %2/%3 layers on the GPU \u00b7 context %4 \u00b7 %5 \u00b7 template %6")
        .arg(arch)
        .arg(info.gpu_layers)
        .arg(info.spec.n_layers)
        .arg(info.context_length)
        .arg(info.device, family);
  }
  return tr("%1 \u00b7 %2 layers \u00b7 context %3 \u00b7 %4 \u00b7 template %5")
      .arg(arch)
      .arg(info.spec.n_layers)
      .arg(info.context_length)
      .arg(info.device, family);
}

void MainWindow::on_model_failed(const QString& error) {
  chats_->clearModel();
  loading_ = false;
  show_model_in_pages(chats_->model());
  loading_bar_->setVisible(false);
  statusBar()->clearMessage();
  model_label_->setText(
      tr("No model loaded \u2014 open one, pick one on the Models page, or load the demo from "
         "the File menu"));
  notice_->showError(error);
  set_model_ready(false);
  emit modelError(error);
}

void MainWindow::on_frame(const PanelFrame& frame) {
  if (live_panel_->isVisible()) live_panel_->setFrame(frame);
  quant_->setPanelFrame(frame);
  update_serve_status(&frame);
}

void MainWindow::set_model_ready(bool ready) {
  chat_panel_->setModelReady(ready);
}

QString MainWindow::noticeText() const {
  return notice_->text();
}

void MainWindow::showNotice(const QString& text) {
  notice_->showInfo(text);
}

QString MainWindow::workInProgress() const {
  QStringList work;
  const int writing = chats_->replyingChats();
  if (writing > 0) work << tr("a reply is being written in %n chat(s)", nullptr, writing);
  if (loading_) work << tr("a model is loading");
  return work.join(tr(" and "));
}

void MainWindow::setQuitConfirmation(std::function<bool(const QString&)> confirm) {
  confirm_quit_ = std::move(confirm);
}

void MainWindow::closeEvent(QCloseEvent* event) {
  // Replies in flight end with the engine: the controller's destructor joins the worker
  // thread, which deletes the engine there. Work in progress is discarded only when the
  // user says so.
  const QString work = workInProgress();
  if (!work.isEmpty()) {
    const bool quit = confirm_quit_
                          ? confirm_quit_(work)
                          : QMessageBox::question(this, tr("Quit KVScope"),
                                                  tr("Quit now? %1; it will be stopped and what it "
                                                     "has not finished is lost.")
                                                      .arg(work.left(1).toUpper() + work.mid(1))) ==
                                QMessageBox::Yes;
    if (!quit) {
      event->ignore();
      return;
    }
  }
  event->accept();
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
  const auto urls = event->mimeData()->urls();
  if (urls.size() == 1 && urls.front().isLocalFile()) event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event) {
  const auto urls = event->mimeData()->urls();
  if (urls.size() == 1 && urls.front().isLocalFile()) openModel(urls.front().toLocalFile());
}

void MainWindow::setPanelVisible(bool visible) {
  live_panel_->parentWidget()->setVisible(visible);
  engine_->setPanelEnabled(visible);
  if (panel_action_->isChecked() != visible) panel_action_->setChecked(visible);
}

void MainWindow::remember_recent(const QString& path) {
  QSettings settings;
  QStringList recent = settings.value(kRecentModelsKey).toStringList();
  recent.removeAll(path);
  recent.prepend(path);
  while (recent.size() > 8) recent.removeLast();
  settings.setValue(kRecentModelsKey, recent);
  rebuild_recent_menu();
}

void MainWindow::rebuild_recent_menu() {
  recent_menu_->clear();
  const QStringList recent = QSettings().value(kRecentModelsKey).toStringList();
  for (const QString& path : recent) {
    recent_menu_->addAction(QFileInfo(path).fileName(), this, [this, path] { openModel(path); })
        ->setToolTip(path);
  }
  recent_menu_->setEnabled(!recent.isEmpty());
}

}  // namespace kvscope::ui
