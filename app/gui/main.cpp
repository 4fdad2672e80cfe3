// kvscope: the desktop app. `kvscope [MODEL]`.
#include <QApplication>

#include "main_window.h"

int main(int argc, char** argv) {
  QApplication app(argc, argv);
  QApplication::setApplicationName("KVScope");
  QApplication::setOrganizationName("KVScope");
  kvscope::ui::MainWindow window;
  window.show();
  return QApplication::exec();
}
