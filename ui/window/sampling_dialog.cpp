#include "window/sampling_dialog.h"

#include <QDialogButtonBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QSpinBox>

#include <algorithm>
#include <limits>

namespace kvscope::ui {
namespace {

QDoubleSpinBox* real_box(QWidget* parent, double lo, double hi, double step, double value) {
  auto* box = new QDoubleSpinBox(parent);
  box->setRange(lo, hi);
  box->setSingleStep(step);
  box->setDecimals(2);
  box->setValue(value);
  return box;
}

QSpinBox* int_box(QWidget* parent, int lo, int hi, std::int64_t value) {
  auto* box = new QSpinBox(parent);
  box->setRange(lo, hi);
  box->setValue(static_cast<int>(std::clamp<std::int64_t>(value, lo, hi)));
  return box;
}

}  // namespace

SamplingDialog::SamplingDialog(const SamplingSettings& s, std::int64_t context_length,
                               QWidget* parent)
    : QDialog(parent) {
  setWindowTitle(tr("Sampling settings"));
  const SamplingParams& p = s.params;
  const int max_ctx = static_cast<int>(
      std::clamp<std::int64_t>(context_length, 1, std::numeric_limits<int>::max()));
  temperature_ = real_box(this, 0.0, 5.0, 0.05, p.temperature);
  top_k_ = int_box(this, 0, 100000, p.top_k);
  top_p_ = real_box(this, 0.0, 1.0, 0.01, p.top_p);
  min_p_ = real_box(this, 0.0, 1.0, 0.01, p.min_p);
  repeat_penalty_ = real_box(this, 0.1, 5.0, 0.05, p.repeat_penalty);
  repeat_last_n_ = int_box(this, -1, 1 << 20, p.repeat_last_n);
  max_tokens_ = int_box(this, 1, max_ctx, s.max_tokens);
  seed_ = int_box(this, 0, std::numeric_limits<int>::max(), static_cast<std::int64_t>(p.seed));
  temperature_->setToolTip(tr("0 picks the most likely token every time (greedy)"));
  top_k_->setSpecialValueText(tr("off"));
  repeat_last_n_->setSpecialValueText(tr("whole text"));
  seed_->setSpecialValueText(tr("random for each reply"));

  auto* form = new QFormLayout(this);
  form->addRow(tr("Temperature"), temperature_);
  form->addRow(tr("Top-k"), top_k_);
  form->addRow(tr("Top-p"), top_p_);
  form->addRow(tr("Min-p"), min_p_);
  form->addRow(tr("Repetition penalty"), repeat_penalty_);
  form->addRow(tr("Penalty looks back (tokens)"), repeat_last_n_);
  form->addRow(tr("Reply length (tokens)"), max_tokens_);
  form->addRow(tr("Seed"), seed_);
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
  form->addRow(buttons);
  connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
}

SamplingSettings SamplingDialog::settings() const {
  SamplingSettings s;
  s.params.temperature = static_cast<float>(temperature_->value());
  s.params.top_k = top_k_->value();
  s.params.top_p = static_cast<float>(top_p_->value());
  s.params.min_p = static_cast<float>(min_p_->value());
  s.params.repeat_penalty = static_cast<float>(repeat_penalty_->value());
  s.params.repeat_last_n = repeat_last_n_->value();
  s.params.seed = static_cast<std::uint64_t>(seed_->value());
  s.max_tokens = max_tokens_->value();
  return s;
}

}  // namespace kvscope::ui
