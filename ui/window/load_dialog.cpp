#include "window/load_dialog.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QThread>

#include "plan/units.h"

namespace kvscope::ui {
namespace {

QComboBox* dtype_box(QWidget* parent, const QString& value) {
  auto* box = new QComboBox(parent);
  box->addItem(QStringLiteral("f16"), QStringLiteral("f16"));
  box->addItem(LoadDialog::tr("int8 (q8_0-like)"), QStringLiteral("int8"));
  box->addItem(LoadDialog::tr("int4 (q4_0-like)"), QStringLiteral("int4"));
  box->setCurrentIndex(std::max(0, box->findData(value)));
  return box;
}

QSpinBox* int_box(QWidget* parent, int lo, int hi, int value, const QString& zero_text = {}) {
  auto* box = new QSpinBox(parent);
  box->setRange(lo, hi);
  box->setValue(value);
  if (!zero_text.isEmpty()) box->setSpecialValueText(zero_text);
  return box;
}

void select_data(QComboBox* box, const QString& value) {
  box->setCurrentIndex(std::max(0, box->findData(value)));
}

// The gpu-layers choice that takes its count from the spin box.
constexpr int kGpuLayerCountItem = 2;

// Why no layer can go on a GPU with this backend choice; empty where some can.
QString no_gpu_layers_reason(bool cuda_built, const QString& backend) {
  if (!cuda_built) return LoadDialog::tr("This build has no CUDA backend");
  if (backend == QLatin1String("cpu")) return LoadDialog::tr("The CPU backend runs every layer");
  return {};
}

}  // namespace

LoadDialog::LoadDialog(const QString& path, const LoadSettings& s, const QVector<GpuPreset>& gpus,
                       const CudaSupport& cuda, QWidget* parent)
    : QDialog(parent),
      cuda_built_(cuda.built),
      path_(new QLineEdit(path, this)),
      backend_(new QComboBox(this)),
      gpu_layers_(new QComboBox(this)),
      gpu_layer_count_(int_box(this, 0, LoadSettings::kMaxGpuLayers, 0)),
      gpu_layers_note_(new QLabel(this)),
      k_dtype_(dtype_box(this, s.k_dtype)),
      v_dtype_(dtype_box(this, s.v_dtype)),
      block_size_(int_box(this, 1, 1024, s.block_size)),
      context_(int_box(this, 0, 1 << 20, s.context_length, tr("the model's"))),
      threads_(int_box(this, 0, 4 * QThread::idealThreadCount(), s.threads, tr("all cores"))),
      memory_(new QComboBox(this)),
      custom_gib_(new QDoubleSpinBox(this)),
      kv_pool_(int_box(this, 0, 1 << 20, s.kv_pool_mib, tr("four full contexts"))) {
  setWindowTitle(tr("Open model"));
  path_->setPlaceholderText(tr("empty: the built-in demo model"));
  path_->setMinimumWidth(420);
  auto* file_button = new QPushButton(tr("File\u2026"), this);
  auto* folder_button = new QPushButton(tr("Folder\u2026"), this);
  auto* path_row = new QHBoxLayout;
  path_row->addWidget(path_, 1);
  path_row->addWidget(file_button);
  path_row->addWidget(folder_button);

  backend_->setObjectName(QStringLiteral("backend"));
  backend_->addItem(tr("Auto (CUDA when it works, else CPU)"), QStringLiteral("auto"));
  backend_->addItem(tr("CPU"), QStringLiteral("cpu"));
  backend_->addItem(tr("CUDA \u2014 %1").arg(cuda.status), QStringLiteral("cuda"));
  if (!cuda.available) {
    auto* model = qobject_cast<QStandardItemModel*>(backend_->model());
    model->item(2)->setEnabled(false);
  }
  select_data(backend_, s.backend);

  memory_->addItem(tr("This machine's memory"), QString());
  for (const GpuPreset& g : gpus) {
    memory_->addItem(tr("Simulated %1 (%2)")
                         .arg(QString::fromStdString(g.name),
                              QString::fromStdString(human_bytes(g.memory_bytes))),
                     QString::fromStdString(g.slug));
  }
  memory_->addItem(tr("Custom size"), QStringLiteral("custom"));
  select_data(memory_, s.memory);
  custom_gib_->setRange(0.25, 4096);
  custom_gib_->setSuffix(QStringLiteral(" GiB"));
  custom_gib_->setValue(s.custom_memory_gib);
  kv_pool_->setSuffix(QStringLiteral(" MiB"));
  auto update_custom = [this] {
    custom_gib_->setEnabled(memory_->currentData().toString() == QLatin1String("custom"));
  };
  update_custom();

  auto* form = new QFormLayout(this);
  form->addRow(tr("Model"), path_row);
  form->addRow(tr("Backend"), backend_);
  form->addRow(tr("Layers on the GPU"), gpu_layers_row(s.gpu_layers));
  form->addRow(tr("K cache dtype"), k_dtype_);
  form->addRow(tr("V cache dtype"), v_dtype_);
  form->addRow(tr("Block size (tokens)"), block_size_);
  form->addRow(tr("Context length"), context_);
  form->addRow(tr("CPU threads"), threads_);
  form->addRow(tr("Memory budget"), memory_);
  form->addRow(tr("Custom budget"), custom_gib_);
  form->addRow(tr("KV pool"), kv_pool_);
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Open | QDialogButtonBox::Cancel, this);
  form->addRow(buttons);

  connect(file_button, &QPushButton::clicked, this, &LoadDialog::browse_file);
  connect(folder_button, &QPushButton::clicked, this, &LoadDialog::browse_folder);
  connect(memory_, &QComboBox::currentIndexChanged, this, update_custom);
  connect(backend_, &QComboBox::currentIndexChanged, this, &LoadDialog::update_gpu_layers);
  connect(gpu_layers_, &QComboBox::currentIndexChanged, this, &LoadDialog::update_gpu_layers);
  connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
}

QString LoadDialog::path() const {
  return path_->text().trimmed();
}

LoadSettings LoadDialog::settings() const {
  LoadSettings s;
  s.backend = backend_->currentData().toString();
  s.gpu_layers = gpu_layers();
  s.k_dtype = k_dtype_->currentData().toString();
  s.v_dtype = v_dtype_->currentData().toString();
  s.block_size = block_size_->value();
  s.context_length = context_->value();
  s.threads = threads_->value();
  s.memory = memory_->currentData().toString();
  s.custom_memory_gib = custom_gib_->value();
  s.kv_pool_mib = kv_pool_->value();
  return s;
}

QHBoxLayout* LoadDialog::gpu_layers_row(std::int64_t gpu_layers) {
  gpu_layers_->setObjectName(QStringLiteral("gpuLayers"));
  gpu_layers_->addItem(tr("All (or the most that fit)"), qlonglong{EngineOptions::kAllGpuLayers});
  gpu_layers_->addItem(tr("The most that fit"), qlonglong{EngineOptions::kAutoGpuLayers});
  gpu_layers_->addItem(tr("A number"));  // kGpuLayerCountItem: the spin box holds the count
  gpu_layers_->setCurrentIndex(gpu_layers >= 0
                                   ? kGpuLayerCountItem
                                   : std::max(0, gpu_layers_->findData(qlonglong{gpu_layers})));
  gpu_layer_count_->setObjectName(QStringLiteral("gpuLayerCount"));
  if (gpu_layers >= 0) gpu_layer_count_->setValue(static_cast<int>(gpu_layers));
  gpu_layer_count_->setToolTip(
      tr("The first N layers run on the GPU, the rest on the CPU; 0: the CPU runs them all. "
         "A number at or past the model's layer count puts every layer on the GPU (the count "
         "is known once the model is loaded)."));
  gpu_layers_note_->setObjectName(QStringLiteral("gpuLayersNote"));
  gpu_layers_note_->setEnabled(false);  // drawn greyed: a hint, not a control
  auto* row = new QHBoxLayout;
  row->addWidget(gpu_layers_);
  row->addWidget(gpu_layer_count_);
  row->addWidget(gpu_layers_note_, 1);
  update_gpu_layers();
  return row;
}

// The choice is usable where a GPU can take layers; the count only with "A number".
void LoadDialog::update_gpu_layers() {
  const QString why = no_gpu_layers_reason(cuda_built_, backend_->currentData().toString());
  gpu_layers_->setEnabled(why.isEmpty());
  gpu_layers_->setToolTip(
      why.isEmpty() ? tr("All: every layer on the GPU, or the most that fit when the whole model "
                         "leaves no room for its KV cache. The most that fit: as many as the "
                         "GPU's memory holds with the context length. The rest run on the CPU.")
                    : why);
  gpu_layer_count_->setEnabled(why.isEmpty() && gpu_layers_->currentIndex() == kGpuLayerCountItem);
  gpu_layers_note_->setText(why);
}

std::int64_t LoadDialog::gpu_layers() const {
  if (gpu_layers_->currentIndex() == kGpuLayerCountItem) return gpu_layer_count_->value();
  return gpu_layers_->currentData().toLongLong();
}

void LoadDialog::browse_file() {
  const QString file = QFileDialog::getOpenFileName(this, tr("Open a GGUF model"), path(),
                                                    tr("GGUF models (*.gguf);;All files (*)"));
  if (!file.isEmpty()) path_->setText(file);
}

void LoadDialog::browse_folder() {
  const QString folder = QFileDialog::getExistingDirectory(
      this, tr("Open a Hugging Face model folder (config.json + *.safetensors)"), path());
  if (!folder.isEmpty()) path_->setText(folder);
}

}  // namespace kvscope::ui
