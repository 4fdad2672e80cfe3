#include "window/load_settings.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QSettings>

#include <cmath>
#include <exception>
#include <optional>
#include <utility>

#include "kv/format/kv_format.h"

namespace kvscope::ui {

namespace {

// The texts of the problems found in the settings (no QObject here).
struct LoadSettingsText {
  Q_DECLARE_TR_FUNCTIONS(LoadSettings)
};

// Reads the settings group's values, each checked, defaults kept for what fails.
class CheckedReader {
 public:
  CheckedReader(QSettings& s, QStringList* problems) : s_(s), problems_(problems) {}

  void integer(const char* key, int& value, int lo, int hi) {
    if (!s_.contains(key)) return;
    bool ok = false;
    const qlonglong v = s_.value(key).toLongLong(&ok);
    if (ok && v >= lo && v <= hi) {
      value = static_cast<int>(v);
    } else {
      refuse(key, LoadSettingsText::tr("a whole number from %1 to %2").arg(lo).arg(hi));
    }
  }

  void real(const char* key, double& value, double lo, double hi) {
    if (!s_.contains(key)) return;
    bool ok = false;
    const double v = s_.value(key).toDouble(&ok);
    if (ok && std::isfinite(v) && v >= lo && v <= hi) {
      value = v;
    } else {
      refuse(key, LoadSettingsText::tr("a number from %1 to %2").arg(lo).arg(hi));
    }
  }

  // A value kept as text that `parse` reads (std::nullopt: not a valid one).
  template <class T, class Parse>
  void parsed(const char* key, T& value, Parse parse, const QString& expected) {
    if (!s_.contains(key)) return;
    const QVariant v = s_.value(key);
    std::optional<T> p;
    if (v.canConvert<QString>()) p = parse(v.toString());
    if (p) {
      value = *p;
    } else {
      refuse(key, expected);
    }
  }

  // One of `allowed`, or (allowed empty) any value `valid` accepts.
  template <class Valid>
  void text(const char* key, QString& value, Valid valid, const QString& expected) {
    if (!s_.contains(key)) return;
    const QVariant v = s_.value(key);
    const QString t = v.toString();
    if (v.canConvert<QString>() && valid(t)) {
      value = t;
    } else {
      refuse(key, expected);
    }
  }

 private:
  void refuse(const char* key, const QString& expected) {
    if (problems_) {
      *problems_ << LoadSettingsText::tr("settings: load/%1 = \"%2\" is not %3; using the default")
                        .arg(QLatin1String(key), s_.value(key).toString().left(40), expected);
    }
  }

  QSettings& s_;
  QStringList* problems_;
};

bool is_kv_dtype(const QString& name) {
  try {
    parse_kv_dtype(name.toStdString());
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

// gpu_layers as the settings file keeps it: "all", "auto" or the count.
QString gpu_layers_text(std::int64_t n) {
  if (n == EngineOptions::kAllGpuLayers) return QStringLiteral("all");
  if (n == EngineOptions::kAutoGpuLayers) return QStringLiteral("auto");
  return QString::number(n);
}

// The inverse; std::nullopt for any other text or a count past the dialog's range.
std::optional<std::int64_t> parse_gpu_layers(const QString& text) {
  if (text == QLatin1String("all")) return EngineOptions::kAllGpuLayers;
  if (text == QLatin1String("auto")) return EngineOptions::kAutoGpuLayers;
  bool ok = false;
  const int n = text.toInt(&ok);
  if (ok && n >= 0 && n <= LoadSettings::kMaxGpuLayers) return n;
  return std::nullopt;
}

}  // namespace

// The ranges are the load dialog's.
LoadSettings LoadSettings::read(QSettings& s, QStringList* problems) {
  LoadSettings d;
  s.beginGroup(QStringLiteral("load"));
  CheckedReader r(s, problems);
  r.text(
      "backend", d.backend,
      [](const QString& v) { return v == "auto" || v == "cpu" || v == "cuda"; },
      LoadSettingsText::tr("auto, cpu or cuda"));
  r.parsed("gpu_layers", d.gpu_layers, parse_gpu_layers,
           LoadSettingsText::tr("all, auto or a whole number from 0 to %1")
               .arg(LoadSettings::kMaxGpuLayers));
  r.text("k_dtype", d.k_dtype, is_kv_dtype, LoadSettingsText::tr("a KV dtype (f16, int8, int4)"));
  r.text("v_dtype", d.v_dtype, is_kv_dtype, LoadSettingsText::tr("a KV dtype (f16, int8, int4)"));
  r.integer("block_size", d.block_size, 1, 1024);
  r.integer("context_length", d.context_length, 0, 1 << 20);
  r.integer("threads", d.threads, 0, 1024);
  r.text(
      "memory", d.memory, [](const QString& v) { return v.size() <= 64; },
      LoadSettingsText::tr("a memory preset name"));
  r.real("custom_memory_gib", d.custom_memory_gib, 0.25, 4096);
  r.integer("kv_pool_mib", d.kv_pool_mib, 0, 1 << 20);
  s.endGroup();
  return d;
}

void LoadSettings::write(QSettings& s) const {
  s.beginGroup(QStringLiteral("load"));
  s.setValue("backend", backend);
  s.setValue("gpu_layers", gpu_layers_text(gpu_layers));
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
    if (error) *error = LoadSettingsText::tr("no GPU presets at %1").arg(QDir::cleanPath(file));
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
  o.backend = parse_backend_choice(s.backend.toStdString());
  o.cuda_factory = std::move(cuda_factory);
  // Where no GPU can take layers the dialog greys the choice out, so a count kept from
  // before is not applied: the engine keeps its own note on why the CPU runs them all.
  if (o.cuda_factory && o.backend != BackendChoice::Cpu) o.gpu_layers = s.gpu_layers;
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
