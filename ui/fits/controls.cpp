#include "fits/controls.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QSignalBlocker>

#include <algorithm>
#include <cmath>

#include "widgets/eliding_combo_box.h"
#include "widgets/number_text.h"
#include "widgets/slider_spin.h"

namespace kvscope::ui {

namespace {

constexpr int kLoadedEntry = -1;   // model_ item data of the loaded model
constexpr int kExactWeights = -1;  // weight_type_ item data while the loaded model is chosen
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
constexpr int kMaxBatch = 1024;

QComboBox* dtype_box(QWidget* parent) {
  auto* box = new QComboBox(parent);
  for (const KvDtype d : {KvDtype::F16, KvDtype::Int8, KvDtype::Int4}) {
    box->addItem(QString::fromUtf8(kv_dtype_name(d).data()), static_cast<int>(d));
  }
  return box;
}

void select_data(QComboBox* box, int value) {
  box->setCurrentIndex(std::max(0, box->findData(value)));
}

// The preset first listed with this slug, else the first one (-1 for none).
template <typename List>
int index_of_slug(const List& list, const char* slug) {
  for (int i = 0; i < static_cast<int>(list.size()); ++i) {
    if (list[static_cast<std::size_t>(i)].slug == slug) return i;
  }
  return list.empty() ? -1 : 0;
}

}  // namespace

FitsControls::FitsControls(const FitsCatalogue& catalogue, QWidget* parent)
    : QWidget(parent),
      gpus_(catalogue.gpus),
      model_(new ElidingComboBox(this)),
      weight_type_(new ElidingComboBox(this)),
      k_dtype_(dtype_box(this)),
      v_dtype_(dtype_box(this)),
      gpu_(new ElidingComboBox(this)),
      custom_gib_(new QDoubleSpinBox(this)),
      bandwidth_(new QDoubleSpinBox(this)),
      backend_(new QComboBox(this)),
      utilisation_(new SliderSpin(10, 100, 90, this)),
      batch_(new SliderSpin(1, kMaxBatch, 1, this)),
      context_(new SliderSpin(1, 1, 1, this)),
      most_layers_(new QCheckBox(tr("the most that fit"), this)),
      gpu_layers_(new SliderSpin(0, 1, 1, this)),
      cpu_bandwidth_(new QDoubleSpinBox(this)) {
  for (const ModelPreset& p : catalogue.models) {
    // vllm serve's name for it, as the CLI's --emit vllm gives it.
    const std::string served = p.hf_repo.empty() ? p.slug : p.hf_repo;
    presets_.push_back({QString::fromStdString(p.name),
                        p.spec,
                        p.n_params,
                        std::nullopt,
                        16,
                        {},
                        QString::fromStdString(served),
                        {},
                        0,
                        0});
  }
  configure_inputs();
  fill_models();
  fill_gpus();
  model_->setCurrentIndex(
      std::max(0, model_->findData(index_of_slug(catalogue.models, "llama-2-7b"))));
  build_layout();

  connect(model_, &QComboBox::currentIndexChanged, this, &FitsControls::on_model_changed);
  connect(gpu_, &QComboBox::currentIndexChanged, this, &FitsControls::on_gpu_changed);
  for (QComboBox* box : {weight_type_, k_dtype_, v_dtype_, backend_}) {
    connect(box, &QComboBox::currentIndexChanged, this, &FitsControls::emit_changed);
  }
  for (QDoubleSpinBox* box : {custom_gib_, bandwidth_, cpu_bandwidth_}) {
    connect(box, &QDoubleSpinBox::valueChanged, this, &FitsControls::emit_changed);
  }
  for (SliderSpin* s : {utilisation_, batch_, context_, gpu_layers_}) {
    connect(s, &SliderSpin::valueChanged, this, &FitsControls::emit_changed);
  }
  connect(most_layers_, &QCheckBox::toggled, this, [this] {
    update_split_controls();
    emit_changed();
  });
  connect(backend_, &QComboBox::currentIndexChanged, this, &FitsControls::update_split_controls);
  on_model_changed();
  on_gpu_changed();
  update_split_controls();
}

void FitsControls::configure_inputs() {
  for (const WeightTypeInfo& w : weight_types()) {
    weight_type_->addItem(tr("%1 (%2 bits per weight)")
                              .arg(QString::fromUtf8(w.name.data(), qsizetype(w.name.size())))
                              .arg(w.bits_per_weight),
                          static_cast<int>(w.type));
  }
  select_data(weight_type_, static_cast<int>(WeightType::Q4_K_M));
  custom_gib_->setRange(0.25, 4096);
  custom_gib_->setDecimals(2);
  custom_gib_->setSuffix(QStringLiteral(" GiB"));
  custom_gib_->setValue(16);
  bandwidth_->setRange(1, 100000);
  bandwidth_->setDecimals(0);
  bandwidth_->setSuffix(QStringLiteral(" GB/s"));
  bandwidth_->setValue(500);
  backend_->addItem(
      tr("CUDA (+%1 context)").arg(bytes_text(backend_overhead_bytes(PlanBackend::Cuda))),
      static_cast<int>(PlanBackend::Cuda));
  backend_->addItem(tr("CPU (simulated GPU)"), static_cast<int>(PlanBackend::Cpu));
  utilisation_->setSuffix(QStringLiteral(" %"));
  context_->setSingleStep(256);
  context_->setSuffix(tr(" tokens"));
  batch_->setSuffix(tr(" seq"));
  most_layers_->setChecked(true);
  gpu_layers_->setSuffix(tr(" layers"));
  // Dual-channel DDR5 reads about this; `kvscope-cli bench` measures the machine's own.
  cpu_bandwidth_->setRange(1, 10000);
  cpu_bandwidth_->setDecimals(0);
  cpu_bandwidth_->setSuffix(QStringLiteral(" GB/s"));
  cpu_bandwidth_->setValue(60);
}

void FitsControls::build_layout() {
  auto* form = new QFormLayout(this);
  form->setContentsMargins(0, 0, 0, 0);
  form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
  form->addRow(tr("Model"), model_);
  form->addRow(tr("Weights"), weight_type_);
  auto* dtypes = new QHBoxLayout;
  dtypes->addWidget(k_dtype_, 1);
  dtypes->addWidget(v_dtype_, 1);
  form->addRow(tr("KV cache K / V"), dtypes);
  form->addRow(tr("GPU"), gpu_);
  auto* custom = new QHBoxLayout;
  custom->addWidget(custom_gib_, 1);
  custom->addWidget(bandwidth_, 1);
  form->addRow(tr("Memory, bandwidth"), custom);
  form->addRow(tr("Backend"), backend_);
  form->addRow(tr("Utilisation"), utilisation_);
  form->addRow(tr("Batch"), batch_);
  form->addRow(tr("Context"), context_);
  form->addRow(tr("Layers on the GPU"), gpu_layers_);
  form->addRow(QString(), most_layers_);
  form->addRow(tr("CPU memory bandwidth"), cpu_bandwidth_);
  weight_type_->setToolTip(tr("How a preset's weights are stored; a loaded model's are exact"));
  utilisation_->setToolTip(tr("Fraction of the GPU's memory the engine may take"));
  batch_->setToolTip(tr("Sequences decoded together, each with its own KV cache"));
  context_->setToolTip(tr("Tokens per sequence: prompt and reply"));
  gpu_layers_->setToolTip(
      tr("A model larger than the GPU runs its first layers on the GPU and the rest on the CPU "
         "(llama.cpp's -ngl; here, Open model's Layers on the GPU; kvscope-cli --gpu-layers)"));
  cpu_bandwidth_->setToolTip(
      tr("How fast the CPU reads its RAM: the layers on the CPU are read "
         "at this speed every token (kvscope-cli bench measures it)"));
}

// The split is a CUDA question (the CPU backend holds every layer in RAM); a count is the
// user's only while "most that fit" is off.
void FitsControls::update_split_controls() {
  const bool cuda = static_cast<PlanBackend>(backend_->currentData().toInt()) == PlanBackend::Cuda;
  most_layers_->setEnabled(cuda);
  gpu_layers_->setEnabled(cuda && !most_layers_->isChecked());
  cpu_bandwidth_->setEnabled(cuda);
}

void FitsControls::showPlannedGpuLayers(std::int64_t layers) {
  if (!most_layers_->isChecked()) return;
  const QSignalBlocker block(gpu_layers_);
  gpu_layers_->setValue(layers < 0 ? gpu_layers_->slider()->maximum() : static_cast<int>(layers));
}

void FitsControls::fill_models() {
  const QSignalBlocker block(model_);
  model_->clear();
  if (loaded_) model_->addItem(tr("Loaded: %1").arg(loaded_->label), kLoadedEntry);
  for (int i = 0; i < static_cast<int>(presets_.size()); ++i) {
    model_->addItem(presets_[static_cast<std::size_t>(i)].label, i);
  }
}

void FitsControls::fill_gpus() {
  for (const GpuPreset& g : gpus_) {
    gpu_->addItem(
        QStringLiteral("%1 (%2)").arg(QString::fromStdString(g.name), bytes_text(g.memory_bytes)));
  }
  gpu_->addItem(tr("Custom size"));
  const int preferred = index_of_slug(gpus_, "rtx-4090");
  gpu_->setCurrentIndex(preferred >= 0 ? preferred : gpu_->count() - 1);
}

const FitsControls::ModelEntry* FitsControls::current_model() const {
  const QVariant item = model_->currentData();
  if (!item.isValid()) return nullptr;
  const int index = item.toInt();
  if (index == kLoadedEntry) return loaded_ ? &*loaded_ : nullptr;
  return &presets_[static_cast<std::size_t>(index)];
}

bool FitsControls::hasModel() const {
  return current_model() != nullptr;
}

bool FitsControls::loadedModelSelected() const {
  return model_->currentData().isValid() && model_->currentData().toInt() == kLoadedEntry;
}

void FitsControls::on_model_changed() {
  ++batching_;
  const ModelEntry* m = current_model();
  show_weights_of(m);
  if (m != nullptr) {
    // A context at the old model's limit follows the new model's limit.
    const bool at_limit = context_->value() == context_->slider()->maximum();
    const int limit = static_cast<int>(std::min<std::int64_t>(m->spec.context_length, 1 << 30));
    context_->setRange(1, limit);
    if (at_limit) context_->setValue(limit);
    const QSignalBlocker block(gpu_layers_);
    gpu_layers_->setRange(0, static_cast<int>(m->spec.n_layers));
  }
  --batching_;
  emit_changed();
}

// A loaded model's weights are its file's tensors: the list says so (and is locked) instead
// of offering a type, and gets the preset's type back when a preset is chosen again.
void FitsControls::show_weights_of(const ModelEntry* m) {
  const QSignalBlocker block(weight_type_);
  const int exact = weight_type_->findData(kExactWeights);
  if (m != nullptr && m->exact_weights) {
    const QString text =
        tr("exact: the file's tensors, %1").arg(bytes_text(m->exact_weights->bytes));
    if (exact < 0) {
      preset_weight_index_ = weight_type_->currentIndex();
      weight_type_->addItem(text, kExactWeights);
    } else {
      weight_type_->setItemText(exact, text);
    }
    weight_type_->setCurrentIndex(weight_type_->findData(kExactWeights));
    weight_type_->setEnabled(false);
    return;
  }
  if (exact >= 0) {
    weight_type_->removeItem(exact);
    weight_type_->setCurrentIndex(preset_weight_index_);
  }
  weight_type_->setEnabled(m != nullptr);
}

void FitsControls::on_gpu_changed() {
  const int i = gpu_->currentIndex();
  const bool custom = i < 0 || i >= gpus_.size();
  custom_gib_->setEnabled(custom);
  bandwidth_->setEnabled(custom);
  if (!custom) {
    // The boxes show the preset's numbers; a later switch to "Custom" starts from them.
    const QSignalBlocker b1(custom_gib_);
    const QSignalBlocker b2(bandwidth_);
    custom_gib_->setValue(static_cast<double>(gpus_[i].memory_bytes) / kGiB);
    bandwidth_->setValue(gpus_[i].bandwidth_gb_s);
  }
  emit_changed();
}

void FitsControls::emit_changed() {
  if (batching_ == 0) emit changed();
}

QString FitsControls::servedModelName() const {
  const ModelEntry* m = current_model();
  return m != nullptr ? m->served_name : QString();
}

FitsInputs FitsControls::inputs() const {
  FitsInputs in;
  if (const ModelEntry* m = current_model()) {
    in.spec = m->spec;
    in.n_params = m->n_params;
    in.exact_weights = m->exact_weights;
    in.block_size = m->block_size;
  }
  if (const int type = weight_type_->currentData().toInt(); type != kExactWeights) {
    in.weight_type = static_cast<WeightType>(type);
  }
  in.k_dtype = static_cast<KvDtype>(k_dtype_->currentData().toInt());
  in.v_dtype = static_cast<KvDtype>(v_dtype_->currentData().toInt());
  in.backend = static_cast<PlanBackend>(backend_->currentData().toInt());
  in.batch = batch_->value();
  in.context = context_->value();
  in.utilisation = utilisation_->value() / 100.0;
  in.gpu_layers = most_layers_->isChecked() ? -1 : gpu_layers_->value();
  in.cpu_bandwidth_gb_s = cpu_bandwidth_->value();
  if (const ModelEntry* m = current_model()) {
    in.layer_bytes = m->layer_bytes;
    in.embedding_bytes = m->embedding_bytes;
    in.output_bytes = m->output_bytes;
  }
  const int g = gpu_->currentIndex();
  if (g >= 0 && g < gpus_.size()) {
    in.memory_bytes = gpus_[g].memory_bytes;
    in.cuda = gpu_workspace_options(gpus_[g]);
    in.bandwidth_gb_s = gpus_[g].bandwidth_gb_s;
  } else {
    in.memory_bytes = std::llround(custom_gib_->value() * kGiB);
    in.bandwidth_gb_s = bandwidth_->value();
  }
  return in;
}

void FitsControls::setLoadedModel(const std::optional<ModelInfo>& info) {
  ++batching_;
  const bool was_selected = loadedModelSelected();
  const bool is_new = info && (!loaded_ || loaded_->path != info->path);
  if (info) {
    loaded_ = ModelEntry{info->name,
                         info->spec,
                         0,
                         info->weights,
                         info->block_size > 0 ? info->block_size : 16,
                         info->path,
                         {},
                         info->layer_weight_bytes,
                         info->embedding_weight_bytes,
                         info->output_weight_bytes};
  } else {
    loaded_.reset();
  }
  const QVariant previous = model_->currentData();
  fill_models();
  if (is_new) {
    // Plan what was loaded, as it was loaded: its cache dtypes and backend.
    model_->setCurrentIndex(0);
    select_data(k_dtype_, static_cast<int>(info->k_dtype));
    select_data(v_dtype_, static_cast<int>(info->v_dtype));
    select_data(backend_, static_cast<int>(info->cuda ? PlanBackend::Cuda : PlanBackend::Cpu));
  } else if (!info && was_selected) {
    model_->setCurrentIndex(0);
  } else {
    model_->setCurrentIndex(std::max(0, model_->findData(previous)));
  }
  if (is_new) show_loaded_split(info->gpu_layers);
  --batching_;
  on_model_changed();
}

// A model loaded split between GPU and CPU is planned with the engine's layer count, not the
// most that fit the card chosen here; loaded whole, the most that fit as before.
void FitsControls::show_loaded_split(std::int64_t gpu_layers) {
  most_layers_->setChecked(gpu_layers <= 0);
  if (gpu_layers <= 0) return;
  const ModelEntry* m = current_model();
  const QSignalBlocker block(gpu_layers_);
  if (m != nullptr) gpu_layers_->setRange(0, static_cast<int>(m->spec.n_layers));
  gpu_layers_->setValue(static_cast<int>(gpu_layers));
}

}  // namespace kvscope::ui
