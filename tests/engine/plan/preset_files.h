// The preset catalogues the tests read: the source tree's resources/presets (what gets
// installed), found from this file's own path so that no build step has to copy them first.
#pragma once

#include <cstdlib>
#include <filesystem>

#include "plan/presets.h"

namespace kvscope::test {

// $KVSCOPE_PRESETS_DIR first: a test binary run away from its source tree (a GPU machine
// given a prebuilt bundle, kernels/gpu_bundle.sh) is told where the catalogues are.
inline std::filesystem::path presets_dir() {
  if (const char* env = std::getenv("KVSCOPE_PRESETS_DIR"); env != nullptr && *env != '\0') {
    return env;
  }
  return std::filesystem::path(__FILE__).parent_path() / ".." / ".." / ".." / "resources" /
         "presets";
}

inline const std::vector<ModelPreset>& model_presets() {
  static const std::vector<ModelPreset> presets = load_model_presets(presets_dir() / "models.json");
  return presets;
}

inline const std::vector<GpuPreset>& gpu_presets() {
  static const std::vector<GpuPreset> presets = load_gpu_presets(presets_dir() / "gpus.json");
  return presets;
}

}  // namespace kvscope::test
