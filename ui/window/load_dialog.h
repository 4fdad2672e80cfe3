// LoadDialog: choose a model (GGUF file or Hugging Face folder) and how to load it:
// backend, KV dtype for K and V, block size, context length, threads and memory budget
// (this machine, a simulated GPU from the presets, or a custom size).
#pragma once

#include <QDialog>
#include <QVector>

#include "window/load_settings.h"

class QComboBox;
class QDoubleSpinBox;
class QLineEdit;
class QSpinBox;

namespace kvscope::ui {

class LoadDialog : public QDialog {
  Q_OBJECT

 public:
  // `cuda_status`: the CUDA device name, or why CUDA cannot be used (then it is disabled).
  LoadDialog(const QString& path, const LoadSettings& settings, const QVector<GpuPreset>& gpus,
             bool cuda_available, const QString& cuda_status, QWidget* parent = nullptr);

  QString path() const;  // empty: the demo model
  LoadSettings settings() const;

 private:
  void browse_file();
  void browse_folder();

  QLineEdit* path_;
  QComboBox* backend_;
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
