// The presets the "What fits" page offers: the model and GPU catalogues shipped with the app
// (bin/../share/kvscope/presets/{models,gpus}.json, where load_gpu_catalogue() finds the
// GPUs too). A missing or broken file leaves that list empty and says why in `error`; the
// page then offers what remains (a loaded model, a custom memory size).
#pragma once

#include <QString>
#include <QVector>

#include <vector>

#include "plan/presets.h"

namespace kvscope::ui {

struct FitsCatalogue {
  std::vector<ModelPreset> models;
  QVector<GpuPreset> gpus;
  QString error;  // empty when both files loaded
};

FitsCatalogue load_fits_catalogue();

}  // namespace kvscope::ui
