// FitsControls: the inputs of the "What fits" page, one per question a user asks: which
// model (a preset, or the loaded model with its exact weights), stored in which weight
// type, K and V cache dtypes, which GPU (a preset or a custom size and bandwidth), the
// backend (CUDA counts its context), the utilisation, the batch and the context; for a model
// larger than the GPU, the layers on the GPU (the most that fit, or a count) and the CPU's
// memory bandwidth. Every change emits changed() once; inputs() reads them all as one
// FitsInputs.
#pragma once

#include <QWidget>

#include <optional>
#include <vector>

#include "fits/catalogue.h"
#include "plan/fits_answers.h"
#include "worker/engine_messages.h"

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QFormLayout;

namespace kvscope::ui {

class SliderSpin;

class FitsControls : public QWidget {
  Q_OBJECT

 public:
  explicit FitsControls(const FitsCatalogue& catalogue, QWidget* parent = nullptr);

  FitsInputs inputs() const;
  // Whether a model is chosen (there may be neither a preset nor a loaded model).
  bool hasModel() const;
  bool loadedModelSelected() const;
  // The name `vllm serve` takes for the chosen preset: its Hugging Face repo, else its slug
  // (as the CLI's --emit vllm); empty for the loaded model or none.
  QString servedModelName() const;

  // See FitsPage::setLoadedModel.
  void setLoadedModel(const std::optional<ModelInfo>& info);

  QComboBox* modelBox() const { return model_; }
  QComboBox* weightTypeBox() const { return weight_type_; }
  QComboBox* kDtypeBox() const { return k_dtype_; }
  QComboBox* vDtypeBox() const { return v_dtype_; }
  QComboBox* gpuBox() const { return gpu_; }
  QDoubleSpinBox* customMemoryGib() const { return custom_gib_; }
  QDoubleSpinBox* bandwidthGbS() const { return bandwidth_; }
  QComboBox* backendBox() const { return backend_; }
  SliderSpin* utilisationPercent() const { return utilisation_; }
  SliderSpin* batch() const { return batch_; }
  SliderSpin* context() const { return context_; }
  QCheckBox* mostLayersThatFit() const { return most_layers_; }
  SliderSpin* gpuLayers() const { return gpu_layers_; }
  QDoubleSpinBox* cpuBandwidthGbS() const { return cpu_bandwidth_; }
  // The layers the planner put on the GPU when "the most that fit" is ticked (the slider
  // follows without a changed()); -1: no split (the whole model fits).
  void showPlannedGpuLayers(std::int64_t layers);

 signals:
  void changed();

 private:
  struct ModelEntry {
    QString label;
    ModelSpec spec;
    std::int64_t n_params = 0;
    std::optional<WeightFootprint> exact_weights;
    std::int64_t block_size = 16;
    QString path;         // a loaded model's file, to tell a new load from an update
    QString served_name;  // a preset's, see servedModelName()
    // a loaded model's exact bytes per layer, token table, output head (FitsInputs)
    std::vector<std::int64_t> layer_bytes;
    std::int64_t embedding_bytes = 0;
    std::int64_t output_bytes = 0;
  };

  void configure_inputs();
  void build_layout();
  void fill_models();
  void fill_gpus();
  const ModelEntry* current_model() const;
  void on_model_changed();
  void show_weights_of(const ModelEntry* m);
  void show_loaded_split(std::int64_t gpu_layers);
  void on_gpu_changed();
  void update_split_controls();
  void emit_changed();

  std::vector<ModelEntry> presets_;
  std::optional<ModelEntry> loaded_;
  QVector<GpuPreset> gpus_;
  QComboBox* model_;
  QComboBox* weight_type_;
  QComboBox* k_dtype_;
  QComboBox* v_dtype_;
  QComboBox* gpu_;
  QDoubleSpinBox* custom_gib_;
  QDoubleSpinBox* bandwidth_;
  QComboBox* backend_;
  SliderSpin* utilisation_;
  SliderSpin* batch_;
  SliderSpin* context_;
  QCheckBox* most_layers_;
  SliderSpin* gpu_layers_;
  QDoubleSpinBox* cpu_bandwidth_;
  // > 0 while several controls are set at once: changed() is emitted once at the end.
  int batching_ = 0;
  int preset_weight_index_ = 0;  // the weight type chosen before the loaded model was
};

}  // namespace kvscope::ui
