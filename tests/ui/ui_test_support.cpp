#include "ui_test_support.h"

#include <QDir>
#include <QFileInfo>
#include <QSignalSpy>
#include <QTemporaryDir>

#include <memory>

#include "window/main_window.h"

namespace kvscope::ui::test {

QString shared_dir() {
  const QByteArray env = qgetenv("KVSCOPE_SHARED_DIR");
  return QDir::cleanPath(env.isEmpty() ? QStringLiteral(KVSCOPE_DEFAULT_SHARED_DIR)
                                       : QString::fromLocal8Bit(env));
}

QString shared_file(const QString& relative) {
  const QString path = QDir(shared_dir()).filePath(relative);
  return QFileInfo::exists(path) ? path : QString();
}

QString scratch_dir() {
  static std::unique_ptr<QTemporaryDir> root;
  static int counter = 0;
  if (!root) root = std::make_unique<QTemporaryDir>();
  const QString dir = QDir(root->path()).filePath(QString::number(++counter));
  QDir().mkpath(dir);
  return dir;
}

EngineOptions test_engine_options() {
  EngineOptions o;
  o.backend = BackendChoice::Cpu;
  o.n_threads = 1;
  o.context_length = 512;
  o.scheduler.max_batch_tokens = 256;
  return o;
}

bool load_model(MainWindow& window, const QString& path) {
  QSignalSpy ready(&window, &MainWindow::modelReady);
  QSignalSpy error(&window, &MainWindow::modelError);
  window.openModel(path);
  for (int i = 0; i < 1200 && ready.count() + error.count() == 0; ++i) QTest::qWait(100);
  if (error.count() > 0) qWarning("load failed: %s", qPrintable(window.noticeText()));
  return ready.count() > 0 && error.count() == 0;
}

}  // namespace kvscope::ui::test
