// LoadDialog: choose a model (GGUF file or Hugging Face folder) and how to load it:
// backend, layers on the GPU (when a GPU can take any), KV dtype for K and V, block size, context
// length, threads and memory budget (this machine, a simulated GPU from the presets, or a custom
// size).
#pragma once

#include <QDialog>
#include <QVector>

#include "window/load_settings.h"

class QComboBox;
class QDoubleSpinBox;
class QHBoxLayout;
class QLabel;
class QLineEdit;
class QSpinBox;

namespace kvscope::ui {

// What this process knows of CUDA: the main window's AppConfig, as the dialog needs it.
struct CudaSupport {
  bool built = false;      // the build has a CUDA backend (AppConfig::cuda_factory is set)
  bool available = false;  // a device works, so the CUDA backend can be chosen
  QString status;          // the device's name, or why CUDA cannot be used
};

class LoadDialog : public QDialog {
  Q_OBJECT

 public:
  // The CUDA backend's entry names `cuda.status` and is disabled unless `cuda.available`;
  // layers on the GPU can be chosen where `cuda.built` and the backend is not the CPU.
  LoadDialog(const QString& path, const LoadSettings& settings, const QVector<GpuPreset>& gpus,
             const CudaSupport& cuda, QWidget* parent = nullptr);

  QString path() const;  // empty: the demo model
  LoadSettings settings() const;

 private:
  void browse_file();
  void browse_folder();
  // The "Layers on the GPU" row: the choice, the count for "A number", and why neither can be
  // used where no GPU can take layers.
  QHBoxLayout* gpu_layers_row(std::int64_t gpu_layers);
  void update_gpu_layers();
  std::int64_t gpu_layers() const;

  bool cuda_built_;
  QLineEdit* path_;
  QComboBox* backend_;
  QComboBox* gpu_layers_;
  QSpinBox* gpu_layer_count_;
  QLabel* gpu_layers_note_;
  QComboBox* k_dtype_;
  QComboBox* v_dtype_;
  QSpinBox* block_size_;
  QSpinBox* context_;
  QSpinBox* threads_;
  QComboBox* memory_;
  QDoubleSpinBox* custom_gib_;
  QSpinBox* kv_pool_;
};

}  // namespace kvscope::ui
