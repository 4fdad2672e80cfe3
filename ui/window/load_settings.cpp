#include "window/load_settings.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QSettings>

#include <exception>
#include <utility>

#include "kv/format/kv_format.h"

namespace kvscope::ui {

LoadSettings LoadSettings::read(QSettings& s) {
  LoadSettings d;
  s.beginGroup(QStringLiteral("load"));
  d.backend = s.value("backend", d.backend).toString();
  d.k_dtype = s.value("k_dtype", d.k_dtype).toString();
  d.v_dtype = s.value("v_dtype", d.v_dtype).toString();
  d.block_size = s.value("block_size", d.block_size).toInt();
  d.context_length = s.value("context_length", d.context_length).toInt();
  d.threads = s.value("threads", d.threads).toInt();
  d.memory = s.value("memory", d.memory).toString();
  d.custom_memory_gib = s.value("custom_memory_gib", d.custom_memory_gib).toDouble();
  d.kv_pool_mib = s.value("kv_pool_mib", d.kv_pool_mib).toInt();
  s.endGroup();
  return d;
}

void LoadSettings::write(QSettings& s) const {
  s.beginGroup(QStringLiteral("load"));
  s.setValue("backend", backend);
  s.setValue("k_dtype", k_dtype);
  s.setValue("v_dtype", v_dtype);
  s.setValue("block_size", block_size);
  s.setValue("context_length", context_length);
  s.setValue("threads", threads);
  s.setValue("memory", memory);
  s.setValue("custom_memory_gib", custom_memory_gib);
  s.setValue("kv_pool_mib", kv_pool_mib);
  s.endGroup();
}

QVector<GpuPreset> load_gpu_catalogue(QString* error) {
  const QString file = QDir(QCoreApplication::applicationDirPath())
                           .filePath(QStringLiteral("../share/kvscope/presets/gpus.json"));
  if (!QFileInfo::exists(file)) {
    if (error) *error = QStringLiteral("no GPU presets at %1").arg(QDir::cleanPath(file));
    return {};
  }
  try {
    std::vector<GpuPreset> presets = load_gpu_presets(file.toStdString());
    return QVector<GpuPreset>(std::make_move_iterator(presets.begin()),
                              std::make_move_iterator(presets.end()));
  } catch (const std::exception& e) {
    if (error) *error = QString::fromUtf8(e.what());
    return {};
  }
}

EngineOptions engine_options(const LoadSettings& s, const QVector<GpuPreset>& gpus,
                             BackendFactory cuda_factory) {
  EngineOptions o;
  o.backend = s.backend.toStdString();
  o.cuda_factory = std::move(cuda_factory);
  o.n_threads = s.threads;
  o.k_dtype = parse_kv_dtype(s.k_dtype.toStdString());
  o.v_dtype = parse_kv_dtype(s.v_dtype.toStdString());
  o.block_size = s.block_size;
  o.context_length = s.context_length;
  if (s.kv_pool_mib > 0) o.kv_budget_bytes = static_cast<std::uint64_t>(s.kv_pool_mib) << 20;
  if (s.memory == QLatin1String("custom")) {
    o.memory_budget_bytes = static_cast<std::uint64_t>(s.custom_memory_gib * (1ull << 30));
  } else if (!s.memory.isEmpty()) {
    for (const GpuPreset& g : gpus) {
      if (QString::fromStdString(g.slug) == s.memory) {
        o.memory_budget_bytes = static_cast<std::uint64_t>(g.memory_bytes);
      }
    }
  }
  // Prompt chunks of 256 tokens keep each step short, so stop and model switches are
  // handled quickly and long prompts show their progress.
  o.scheduler.max_batch_tokens = 256;
  return o;
}

}  // namespace kvscope::ui
