// Saving what a widget shows: where to (a save dialog, or in tests the path a chooser set
// with set_export_path_chooser gives), and as what: PNG at the widget's size x its device
// pixel ratio, SVG through QSvgGenerator (vector: text and lines stay sharp), or text.
#pragma once

#include <QString>

#include <functional>

class QWidget;

namespace kvscope::ui {

// (caption, suggested file name, filter) -> path, "" to cancel.
using ExportPathChooser =
    std::function<QString(const QString& caption, const QString& suggested, const QString& filter)>;

// Replaces the save dialog for the whole app (tests); an empty chooser restores the dialog.
void set_export_path_chooser(ExportPathChooser chooser);
QString choose_export_path(QWidget* parent, const QString& caption, const QString& suggested,
                           const QString& filter);

// Each returns "" on success, else what went wrong (naming the file).
QString save_widget_png(QWidget* widget, const QString& path);
QString save_widget_svg(QWidget* widget, const QString& path, const QString& title);
QString save_text_file(const QString& path, const QByteArray& bytes);

// Runs choose + save; a failure is shown in a message box over `parent` (with a chooser
// installed, logged instead: no modal box in tests).
void export_with_dialog(QWidget* parent, const QString& caption, const QString& suggested,
                        const QString& filter, const std::function<QString(const QString&)>& save);

}  // namespace kvscope::ui
