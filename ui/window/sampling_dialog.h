// SamplingDialog: the sampling settings of one chat (temperature, top-k, top-p, min-p,
// repetition penalty, reply length, seed).
#pragma once

#include <QDialog>

#include "chat/session.h"

class QDoubleSpinBox;
class QSpinBox;

namespace kvscope::ui {

class SamplingDialog : public QDialog {
  Q_OBJECT

 public:
  SamplingDialog(const SamplingSettings& settings, std::int64_t context_length,
                 QWidget* parent = nullptr);

  SamplingSettings settings() const;

 private:
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
