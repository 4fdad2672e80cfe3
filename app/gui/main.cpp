// kvscope: the desktop app.
//
//   kvscope [MODEL]                 open MODEL (a GGUF file or a Hugging Face folder);
//                                   without it the last used model, else the demo model
//   --palette light|dark            the colour theme (default: the last one chosen)
//   --window-size WxH               the window's size at start (default 1280x800), e.g. to
//                                   check the screenshots at a large size
//   --notice TEXT                   a line for the notice bar at start (run-app.sh: why the
//                                   demo model is open instead of the downloaded one)
//   --screenshot-dir DIR            run a scripted chat and save PNGs of the window to DIR
//   --screenshot-prefix NAME        file name prefix of those PNGs (default "kvscope")
//   --screenshot-prompt TEXT        the scripted chat's first message (default: a story start)
//   --bench-runs N --bench-tokens M decode tokens/s with the live panel visible vs hidden
//   --send TEXT                     send TEXT once the model is loaded (repeat: in turn),
//                                   printing sent / streaming / finished lines on stdout
#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QFileInfo>
#include <QIcon>
#include <QProcess>
#include <QSettings>
#include <QStandardPaths>

#include "drivers/bench_driver.h"
#include "drivers/screenshot_driver.h"
#include "drivers/send_driver.h"
#include "window/app_palette.h"
#include "window/app_style.h"
#include "window/language.h"
#include "window/main_window.h"
#include "window/settings_keys.h"

#ifdef KVSCOPE_HAVE_CUDA
#include "backend/cuda_device.h"
#include "backend/cuda_factory.h"
#endif

namespace {

// CUDA as this build has it: the probe's answer when kernels/ is built, else unavailable.
kvscope::ui::AppConfig app_config() {
  kvscope::ui::AppConfig config;
  config.demo_folder = QStandardPaths::writableLocation(QStandardPaths::CacheLocation);
  config.chats_path = QStandardPaths::writableLocation(QStandardPaths::AppDataLocation) +
                      QStringLiteral("/chats.sqlite");
#ifdef KVSCOPE_HAVE_CUDA
  const kvscope::CudaDeviceInfo info = kvscope::probe_cuda_device();
  config.cuda_available = info.available;
  config.cuda_status = QString::fromStdString(info.available ? info.name : info.reason);
  config.cuda_factory = kvscope::cuda_backend_factory();
#else
  config.cuda_status =
      QCoreApplication::translate("main", "not in this build (no CUDA toolkit at build time)");
#endif
  return config;
}

// The command line's model, else the last one used (when it still exists), else the demo.
QString startup_model(const QStringList& args) {
  if (!args.isEmpty()) return QFileInfo(args.front()).absoluteFilePath();
  const QString last = QSettings().value(kvscope::ui::kLastModelKey).toString();
  return !last.isEmpty() && QFileInfo::exists(last) ? last : QString();
}

}  // namespace

int main(int argc, char** argv) {
  QApplication app(argc, argv);
  QApplication::setApplicationName("KVScope");
  QApplication::setOrganizationName("KVScope");
  QApplication::setWindowIcon(QIcon(QStringLiteral(":/icons/kvscope.png")));
  QApplication::setDesktopFileName(QStringLiteral("kvscope"));  // Wayland: the .desktop's icon
  QApplication::setStyle(new kvscope::ui::AppStyle);  // Fusion, readable in the dark palette

  // The saved language (else the system's) before any text is made: the --help text too.
  kvscope::ui::install_translators(kvscope::ui::saved_language());

  QCommandLineParser parser;
  // lupdate finds the texts through QT_TRANSLATE_NOOP; `translated` looks them up.
  const auto translated = [](const char* source) {
    return QCoreApplication::translate("main", source);
  };
  parser.setApplicationDescription(
      translated(QT_TRANSLATE_NOOP("main", "Chat with a local model and watch its KV cache.")));
  parser.addHelpOption();
  parser.addPositionalArgument(
      "model", translated(QT_TRANSLATE_NOOP("main", "GGUF file or Hugging Face folder to open")));
  parser.addOption(
      {"palette", translated(QT_TRANSLATE_NOOP("main", "Colour theme: light or dark.")), "theme"});
  parser.addOption({"window-size",
                    translated(QT_TRANSLATE_NOOP("main", "Window size at start, as WxH.")), "size",
                    "1280x800"});
  parser.addOption(
      {"notice",
       translated(QT_TRANSLATE_NOOP("main", "A line to show in the notice bar at start.")),
       "text"});
  parser.addOption(
      {"screenshot-dir",
       translated(QT_TRANSLATE_NOOP("main", "Run a scripted chat, save PNGs here, quit.")), "dir"});
  parser.addOption({"screenshot-prefix",
                    translated(QT_TRANSLATE_NOOP("main", "File name prefix of the PNGs.")), "name",
                    "kvscope"});
  parser.addOption({"screenshot-prompt",
                    translated(QT_TRANSLATE_NOOP("main", "First message of the scripted chat.")),
                    "text"});
  parser.addOption(
      {"bench-runs",
       translated(QT_TRANSLATE_NOOP("main", "Decode speed runs, panel visible and hidden.")), "n"});
  parser.addOption({"bench-tokens",
                    translated(QT_TRANSLATE_NOOP("main", "Tokens per benchmark run.")), "n",
                    "256"});
  parser.addOption({"send",
                    translated(QT_TRANSLATE_NOOP(
                        "main", "Send this message once the model is loaded (repeatable).")),
                    "text"});
  parser.process(app);

  const QString theme =
      parser.isSet("palette")
          ? parser.value("palette")
          : (QSettings().value(kvscope::ui::kDarkThemeKey).toBool() ? "dark" : "light");
  QApplication::setPalette(theme == QLatin1String("dark") ? kvscope::ui::dark_palette()
                                                          : kvscope::ui::light_palette());

  // The window lives in this block so that a restart (View > Language) starts the new process
  // after this one has closed its chat database.
  int code = 0;
  bool restart = false;
  {
    kvscope::ui::MainWindow window(app_config());
    if (parser.isSet("screenshot-dir")) {
      kvscope::ui::ScreenshotPlan plan;
      plan.out_dir = parser.value("screenshot-dir");
      plan.prefix = parser.value("screenshot-prefix");
      if (parser.isSet("screenshot-prompt")) plan.first_prompt = parser.value("screenshot-prompt");
      QDir().mkpath(plan.out_dir);
      new kvscope::ui::ScreenshotDriver(&window, plan);
    } else if (parser.isSet("bench-runs")) {
      new kvscope::ui::BenchDriver(&window, parser.value("bench-runs").toInt(),
                                   parser.value("bench-tokens").toLongLong());
    } else if (parser.isSet("send")) {
      new kvscope::ui::SendDriver(&window, parser.values("send"));
    }
    const QStringList size = parser.value("window-size").split(QLatin1Char('x'));
    if (size.size() == 2 && size[0].toInt() > 0 && size[1].toInt() > 0) {
      window.resize(size[0].toInt(), size[1].toInt());
    }
    window.show();
    window.openModel(startup_model(parser.positionalArguments()));
    if (parser.isSet("notice")) window.showNotice(parser.value("notice"));
    code = QApplication::exec();
    restart = window.restartRequested();
  }
  if (restart) {
    QProcess::startDetached(QCoreApplication::applicationFilePath(),
                            QCoreApplication::arguments().mid(1));
  }
  return code;
}
