#include "main_window.h"

#include <QLabel>
#include <QStatusBar>
#include <QVBoxLayout>

namespace kvscope::ui {

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent) {
  setWindowTitle("KVScope");
  auto* central = new QWidget(this);
  auto* layout = new QVBoxLayout(central);
  auto* title = new QLabel("<h1>KVScope</h1>"
                           "<p>Run a language model locally and see its KV cache.</p>"
                           "<p>The chat and the live cache panel are being built; meanwhile "
                           "<code>kvscope-cli</code> inspects models and tokenizes text.</p>",
                           central);
  title->setWordWrap(true);
  title->setAlignment(Qt::AlignCenter);
  layout->addWidget(title);
  setCentralWidget(central);
  statusBar()->showMessage("No model loaded");
  resize(1280, 800);
}

}  // namespace kvscope::ui
