#include "fits/catalogue.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>

#include <exception>

#include "window/load_settings.h"

namespace kvscope::ui {

namespace {

std::vector<ModelPreset> load_model_catalogue(QString* error) {
  const QString file = QDir(QCoreApplication::applicationDirPath())
                           .filePath(QStringLiteral("../share/kvscope/presets/models.json"));
  if (!QFileInfo::exists(file)) {
    *error = QCoreApplication::translate("FitsCatalogue", "no model presets at %1")
                 .arg(QDir::cleanPath(file));
    return {};
  }
  try {
    return load_model_presets(file.toStdString());
  } catch (const std::exception& e) {
    *error = QString::fromUtf8(e.what());
    return {};
  }
}

}  // namespace

FitsCatalogue load_fits_catalogue() {
  FitsCatalogue c;
  QString model_error;
  QString gpu_error;
  c.models = load_model_catalogue(&model_error);
  c.gpus = load_gpu_catalogue(&gpu_error);
  QStringList errors;
  for (const QString& e : {model_error, gpu_error}) {
    if (!e.isEmpty()) errors << e;
  }
  c.error = errors.join(QStringLiteral("; "));
  return c;
}

}  // namespace kvscope::ui
