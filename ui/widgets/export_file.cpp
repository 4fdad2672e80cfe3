#include "widgets/export_file.h"

#include <QFileDialog>
#include <QMessageBox>
#include <QPainter>
#include <QPixmap>
#include <QSaveFile>
#include <QSvgGenerator>
#include <QWidget>

namespace kvscope::ui {
namespace {

ExportPathChooser& chooser() {
  static ExportPathChooser c;  // GUI thread only
  return c;
}

}  // namespace

void set_export_path_chooser(ExportPathChooser c) {
  chooser() = std::move(c);
}

QString choose_export_path(QWidget* parent, const QString& caption, const QString& suggested,
                           const QString& filter) {
  if (chooser()) return chooser()(caption, suggested, filter);
  return QFileDialog::getSaveFileName(parent, caption, suggested, filter);
}

// grab() renders at the screen's device pixel ratio: widget size x dpr pixels.
QString save_widget_png(QWidget* widget, const QString& path) {
  if (widget->width() <= 0 || widget->height() <= 0) {
    return QWidget::tr("Nothing to save: the picture is not on screen");
  }
  const QPixmap pixmap = widget->grab();
  if (pixmap.isNull() || !pixmap.save(path, "PNG")) {
    return QWidget::tr("Could not write the image %1").arg(path);
  }
  return {};
}

QString save_widget_svg(QWidget* widget, const QString& path, const QString& title) {
  QSvgGenerator svg;
  svg.setFileName(path);
  svg.setSize(widget->size());
  svg.setViewBox(QRect(QPoint(0, 0), widget->size()));
  svg.setTitle(title);
  svg.setDescription(QStringLiteral("KVScope"));
  QPainter painter;
  if (!painter.begin(&svg)) return QWidget::tr("Could not write the drawing %1").arg(path);
  widget->render(&painter);
  painter.end();
  return {};
}

QString save_text_file(const QString& path, const QByteArray& bytes) {
  QSaveFile file(path);  // written beside, then renamed over: never half a file
  if (!file.open(QIODevice::WriteOnly) || file.write(bytes) != bytes.size() || !file.commit()) {
    return QWidget::tr("Could not write %1: %2").arg(path, file.errorString());
  }
  return {};
}

void export_with_dialog(QWidget* parent, const QString& caption, const QString& suggested,
                        const QString& filter, const std::function<QString(const QString&)>& save) {
  const QString path = choose_export_path(parent, caption, suggested, filter);
  if (path.isEmpty()) return;
  const QString error = save(path);
  if (error.isEmpty()) return;
  if (chooser()) {  // tests answer the dialog; a box would wait for a click that never comes
    qWarning("%s: %s", qPrintable(caption), qPrintable(error));
    return;
  }
  QMessageBox::warning(parent, caption, error);
}

}  // namespace kvscope::ui
