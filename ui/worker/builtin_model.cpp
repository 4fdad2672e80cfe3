#include "worker/builtin_model.h"

#include <QCoreApplication>
#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QTemporaryFile>

#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <system_error>

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

// sha256 of a file in hex, or "" when it cannot be read.
QString file_sha256(const QString& path) {
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) return {};
  QCryptographicHash hash(QCryptographicHash::Sha256);
  if (!hash.addData(&f)) return {};
  return QString::fromLatin1(hash.result().toHex());
}

// Whether `path` has reached the disk: its data, then (for a rename) its folder's entry.
bool sync_path(const QString& path) {
  const int fd = ::open(QFile::encodeName(path).constData(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool ok = ::fsync(fd) == 0;
  ::close(fd);
  return ok;
}

// The cached demo is reused only when its checksum file (written after it) matches: a
// truncated or altered file, or one left by an interrupted older version, is made again.
bool cached_demo_is_whole(const QString& path) {
  QFile sum(path + QStringLiteral(".sha256"));
  if (!QFileInfo::exists(path) || !sum.open(QIODevice::ReadOnly)) return false;
  const QString want = QString::fromLatin1(sum.read(64));
  return want.size() == 64 && file_sha256(path) == want;
}

// Makes `path` by calling `write` on a uniquely named temporary file in the same folder, then
// syncs and renames it over `path` (two instances never write the same temporary file).
void write_atomically(const QString& path, const std::function<void(const QString&)>& write) {
  QTemporaryFile tmp(path + QStringLiteral(".XXXXXX.part"));
  tmp.setAutoRemove(true);
  if (!tmp.open()) {
    throw_error<UsageError>("cannot create a temporary file beside {}: {}", path.toStdString(),
                            tmp.errorString().toStdString());
  }
  tmp.close();
  write(tmp.fileName());
  if (!sync_path(tmp.fileName())) {
    throw_error<UsageError>("cannot write {} to disk", tmp.fileName().toStdString());
  }
  std::error_code ec;
  std::filesystem::rename(QFile::encodeName(tmp.fileName()).toStdString(),
                          QFile::encodeName(path).toStdString(), ec);
  if (ec) {
    throw_error<UsageError>("cannot move {} into place: {}", path.toStdString(), ec.message());
  }
  tmp.setAutoRemove(false);  // it is `path` now
  sync_path(QFileInfo(path).absolutePath());
}

// The demo model's name and description, shown in the window (no QObject here).
struct BuiltinModelText {
  Q_DECLARE_TR_FUNCTIONS(BuiltinModel)
};

}  // namespace

QString builtin_model_label() {
  return BuiltinModelText::tr("Demo model (random weights \u2014 output is noise)");
}

QString builtin_model_description() {
  return BuiltinModelText::tr(
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
  if (cached_demo_is_whole(path)) return path;
  write_atomically(path, [](const QString& tmp) {
    write_synthetic_gguf(QFile::encodeName(tmp).toStdString(), demo_spec(), TensorType::F16,
                         kDemoSeed);
  });
  const QByteArray sum = file_sha256(path).toLatin1();
  write_atomically(path + QStringLiteral(".sha256"), [&sum](const QString& tmp) {
    QFile f(tmp);
    if (!f.open(QIODevice::WriteOnly) || f.write(sum) != sum.size()) {
      throw_error<UsageError>("cannot write {}", tmp.toStdString());
    }
  });
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
