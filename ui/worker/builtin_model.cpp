#include "worker/builtin_model.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>

#include "model/model_spec.h"
#include "model/synthetic_model.h"
#include "util/error.h"

namespace kvscope::ui {
namespace {

// Bump when the shape or seed changes, so an old cached file is not reused.
constexpr const char* kDemoFileName = "kvscope-demo-v1.gguf";
constexpr std::uint64_t kDemoSeed = 20240611;
constexpr std::int64_t kDemoWindow = 128;

ModelSpec demo_spec() {
  ModelSpec s;
  s.architecture = "llama";
  s.name = "kvscope-demo";
  s.n_layers = 6;
  s.dim = 256;
  s.n_heads = 8;
  s.n_kv_heads = 2;
  s.head_dim = 32;
  s.rope_dim = 32;
  s.ffn_dim = 704;
  s.vocab_size = 1024;
  s.context_length = 1024;
  s.rope_theta = 10000.0;
  s.norm_eps = 1e-5;
  return s;
}

}  // namespace

QString builtin_model_label() {
  return QStringLiteral("Demo model (random weights \u2014 output is noise)");
}

QString builtin_model_description() {
  return QStringLiteral(
             "Built-in demo: 6 layers, 8 heads, 2 KV heads, head dim 32, f16 weights with seeded "
             "random values. Even layers use full attention, odd layers a %1-token sliding window. "
             "Open a real model (GGUF file or Hugging Face folder) to chat for real.")
      .arg(kDemoWindow);
}

QString ensure_builtin_model(const QString& folder) {
  if (!QDir().mkpath(folder)) {
    throw_error<UsageError>("cannot create the folder {} for the demo model", folder.toStdString());
  }
  const QString path = QDir(folder).filePath(kDemoFileName);
  if (QFileInfo::exists(path)) return path;
  const QString tmp = path + QStringLiteral(".part");
  write_synthetic_gguf(tmp.toStdString(), demo_spec(), TensorType::F16, kDemoSeed);
  QFile::remove(path);
  if (!QFile::rename(tmp, path)) {
    QFile::remove(tmp);
    throw_error<UsageError>("cannot move the demo model into place at {}", path.toStdString());
  }
  return path;
}

EngineOptions builtin_engine_options(EngineOptions base) {
  const ModelSpec spec = demo_spec();
  LayerGroupConfig full, sliding;
  full.k_dtype = sliding.k_dtype = base.k_dtype;
  full.v_dtype = sliding.v_dtype = base.v_dtype;
  sliding.window = kDemoWindow;
  for (std::int64_t l = 0; l < spec.n_layers; ++l)
    (l % 2 == 0 ? full : sliding).layers.push_back(l);
  base.layer_groups = {full, sliding};
  return base;
}

}  // namespace kvscope::ui
