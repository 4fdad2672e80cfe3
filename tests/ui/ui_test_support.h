// Helpers shared by the Qt tests of ui/: where the real model is, scratch files, and the
// engine options the tests load models with.
#pragma once

#include <QString>
#include <QtTest>

#include "run/engine.h"

namespace kvscope::ui {
class MainWindow;
}

namespace kvscope::ui::test {

// $KVSCOPE_SHARED_DIR if set, else the folder configured at build time (../shared).
QString shared_dir();
// shared_dir()/relative when it exists, else empty.
QString shared_file(const QString& relative);
// A fresh folder for one test's files (removed when the process ends).
QString scratch_dir();
// Small, single-threaded engine options (the tests share two cores).
EngineOptions test_engine_options();

// Opens `path` in the window and waits (up to 2 minutes) until it is loaded; true when it
// is. A load error is printed with the window's notice text.
bool load_model(MainWindow& window, const QString& path);

}  // namespace kvscope::ui::test

// Declares `var` as the path of a shared file, or skips the test saying what is missing.
#define KVSCOPE_QT_REQUIRE_SHARED(var, relative)                                         \
  const QString var = ::kvscope::ui::test::shared_file(relative);                        \
  if (var.isEmpty()) {                                                                   \
    QSKIP(qPrintable(QStringLiteral("needs %1/%2 (set KVSCOPE_SHARED_DIR to the folder " \
                                    "holding models/)")                                  \
                         .arg(::kvscope::ui::test::shared_dir(), relative)));            \
  }
