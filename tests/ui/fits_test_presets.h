// Shared by the "What fits" page tests: the shipped presets, a request built the way the
// CLI's `plan` builds it (independently of the page's own request code), the page's number
// formats written from engine/plan/units.h, and a hand-made PlanCheck.
#pragma once

#include <QComboBox>
#include <QCoreApplication>
#include <QDir>
#include <QLineSeries>
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <vector>

#include "fits/fits_page.h"
#include "plan/kv_footprint.h"
#include "plan/presets.h"
#include "plan/units.h"
#include "plan/weight_footprint.h"
#include "run/plan_check.h"

namespace kvscope::ui::fits_test {

inline QString presets_file(const char* name) {
  return QDir(QCoreApplication::applicationDirPath())
      .filePath(QStringLiteral("../share/kvscope/presets/") + QLatin1String(name));
}

inline const ModelPreset& model_preset(const char* slug) {
  static const std::vector<ModelPreset> models =
      load_model_presets(presets_file("models.json").toStdString());
  return find_model_preset(models, slug);
}

inline const GpuPreset& gpu_preset(const char* slug) {
  static const std::vector<GpuPreset> gpus =
      load_gpu_presets(presets_file("gpus.json").toStdString());
  return find_gpu_preset(gpus, slug);
}

// What the CLI's `plan` would be asked for the same choices.
struct Choice {
  const char* model = "llama-2-7b";
  WeightType weights = WeightType::Q4_K_M;
  KvDtype k = KvDtype::F16;
  KvDtype v = KvDtype::F16;
  std::int64_t memory = 0;
  CudaWorkspaceOptions cuda = {};  // the GPU's workspace options (on_gpu)
  double utilisation = 0.9;
  std::int64_t batch = 1;
  std::int64_t context = 0;
  PlanBackend backend = PlanBackend::Cuda;
};

inline PlanRequest request_for(const Choice& c) {
  const ModelPreset& m = model_preset(c.model);
  PlanRequest r =
      make_plan_request(m.spec, preset_weights(m.spec, m.n_params, c.weights), c.k, c.v);
  r.batch = c.batch;
  r.context = c.context;
  r.backend = c.backend;
  r.budget.total_bytes = c.memory;
  r.budget.utilisation = c.utilisation;
  r.cuda = c.cuda;
  return r;
}

// The choice of a GPU preset: its memory and its CUDA workspace (gpu_workspace_options).
inline void on_gpu(Choice& c, const char* slug) {
  c.memory = gpu_preset(slug).memory_bytes;
  c.cuda = gpu_workspace_options(gpu_preset(slug));
}

inline QString digits(std::int64_t n) {
  return QString::fromStdString(group_digits(n));
}
inline QString human(std::int64_t n) {
  return QString::fromStdString(human_bytes(n));
}

inline void select_text(QComboBox* box, const QString& prefix) {
  for (int i = 0; i < box->count(); ++i) {
    if (box->itemText(i).startsWith(prefix)) {
      box->setCurrentIndex(i);
      return;
    }
  }
  QFAIL(qPrintable(QStringLiteral("no item starting with '%1'").arg(prefix)));
}

inline void select_dtype(QComboBox* box, KvDtype d) {
  box->setCurrentIndex(box->findData(static_cast<int>(d)));
}
// A curve's points are kv_footprint's pool bytes for `config` at each x (grown 512 tokens
// at a time, the plan's prefill chunk).
inline void expect_curve(const QLineSeries* series, double unit, const KvCacheConfig& config,
                         std::int64_t batch) {
  QCOMPARE(series->count(), FitsPage::kCurvePoints + 1);
  // sliding-window pools as the engine sizes them (kv_footprint.h)
  const KvCacheConfig built = with_window_pools(config, batch, 512);
  for (const QPointF& p : series->points()) {
    const auto tokens = static_cast<std::int64_t>(p.x());
    const double bytes =
        static_cast<double>(kv_footprint(built, batch, tokens, 512).pool_bytes_needed);
    QVERIFY2(std::abs(p.y() * unit - bytes) <= 1e-9 * std::max(1.0, bytes),
             qPrintable(
                 QStringLiteral("at %1 tokens: %2 vs %3").arg(p.x()).arg(p.y() * unit).arg(bytes)));
  }
}

inline KvCacheConfig shape_with(const char* slug, std::int64_t kv_heads, KvDtype dtype) {
  ModelSpec spec = model_preset(slug).spec;
  spec.n_kv_heads = kv_heads;
  return default_kv_config(spec, dtype, dtype);
}

// A check of a small cache: agreeing, or reaching fewer tokens and bytes than planned.
inline PlanCheck sample_check(bool agree) {
  PlanCheck c;
  c.planned_max_context = 1200;
  c.reached_tokens = agree ? 1200 : 1184;
  c.predicted_pool_bytes = 163840;
  c.allocated_pool_bytes = 163840;
  c.predicted_used_bytes = 3 * 1024 * 1024 + 5;
  c.allocated_used_bytes = agree ? c.predicted_used_bytes : 3 * 1024 * 1024;
  c.next_token_refused = true;
  c.memory.device = "CPU (1 threads)";
  return c;
}

}  // namespace kvscope::ui::fits_test
