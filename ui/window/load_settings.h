// LoadSettings: how the user wants models loaded (backend, layers on the GPU, KV dtypes, block
// size, context, threads, memory budget), kept in QSettings between runs and turned into
// EngineOptions. On the CPU the memory budget can be a simulated GPU from the presets
// (resources/presets/gpus.json), so the headroom chart shows how a chat fits on that card.
#pragma once

#include <QString>
#include <QStringList>
#include <QVector>

#include <cstdint>

#include "plan/presets.h"
#include "run/engine.h"

class QSettings;

namespace kvscope::ui {

struct LoadSettings {
  QString backend = QStringLiteral("auto");  // "auto", "cpu", "cuda"
  // EngineOptions::gpu_layers: kAllGpuLayers, kAutoGpuLayers or a count from 0 to
  // kMaxGpuLayers; kept as "all", "auto" or the count. Applied only where a GPU can take
  // layers (a CUDA build, backend not cpu), as the load dialog offers it.
  std::int64_t gpu_layers = EngineOptions::kAllGpuLayers;
  QString k_dtype = QStringLiteral("f16");
  QString v_dtype = QStringLiteral("f16");
  int block_size = 16;
  int context_length = 0;  // 0: the model's (at most EngineOptions::kDefaultMaxContext)
  int threads = 0;         // 0: all cores
  QString memory = {};     // "": this machine; a GPU preset slug; or "custom"
  double custom_memory_gib = 16.0;
  int kv_pool_mib = 0;  // 0: room for four full contexts

  // The largest count the dialog offers: a model's layer count is unknown before it loads,
  // and the engine takes a count at or past it as every layer.
  static constexpr int kMaxGpuLayers = 1000;

  // The settings file is not trusted (edited by hand, another version, a broken disk): a
  // value of the wrong type or outside the range the load dialog offers is replaced by its
  // default, and `problems` (when given) gets one line per such value naming it.
  static LoadSettings read(QSettings& settings, QStringList* problems = nullptr);
  void write(QSettings& settings) const;
};

// The GPU presets shipped with the app (bin/../share/kvscope/presets/gpus.json), or none
// when the file is missing or unreadable (`error` then says why).
QVector<GpuPreset> load_gpu_catalogue(QString* error = nullptr);

// EngineOptions for `settings`. Throws UsageError for a dtype name the engine rejects.
EngineOptions engine_options(const LoadSettings& settings, const QVector<GpuPreset>& gpus,
                             BackendFactory cuda_factory);

}  // namespace kvscope::ui
