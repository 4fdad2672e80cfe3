// SamplingDialog: the sampling settings of one chat (temperature, top-k, top-p, min-p,
// repetition penalty, reply length, seed). Values the loaded model publishes (a HF folder's
// generation_config.json) are marked beside their boxes, and "Model defaults" puts every
// sampling value back to what a new chat starts from.
#pragma once

#include <QDialog>

#include "chat/session.h"
#include "model/sampling_defaults.h"

class QDoubleSpinBox;
class QSpinBox;

namespace kvscope::ui {

// What a new chat samples with: KVScope's defaults with the model's values over them
// (run/model_sampling.h), and the default reply length.
SamplingSettings defaultSamplingSettings(const SamplingDefaults& model);
// Whether two settings hold the same values in every field the dialog shows.
bool sameSampling(const SamplingSettings& a, const SamplingSettings& b);

class SamplingDialog : public QDialog {
  Q_OBJECT

 public:
  SamplingDialog(const SamplingSettings& settings, std::int64_t context_length,
                 QWidget* parent = nullptr)
      : SamplingDialog(settings, context_length, SamplingDefaults{}, parent) {}
  // `model`: the loaded model's own values (none when it publishes none).
  SamplingDialog(const SamplingSettings& settings, std::int64_t context_length,
                 const SamplingDefaults& model, QWidget* parent = nullptr);

  SamplingSettings settings() const;
  // Sets every sampling value to defaultSamplingSettings(model); reply length and seed stay.
  void resetToModelDefaults();

 private:
  void set_params(const SamplingParams& p);

  SamplingDefaults model_;
  QDoubleSpinBox* temperature_;
  QSpinBox* top_k_;
  QDoubleSpinBox* top_p_;
  QDoubleSpinBox* min_p_;
  QDoubleSpinBox* repeat_penalty_;
  QSpinBox* repeat_last_n_;
  QSpinBox* max_tokens_;
  QSpinBox* seed_;
};

}  // namespace kvscope::ui
