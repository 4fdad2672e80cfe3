#include "window/sampling_dialog.h"

#include <QDialogButtonBox>
#include <QDoubleSpinBox>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QSpinBox>

#include <algorithm>
#include <limits>

#include "run/model_sampling.h"

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

// The box, and beside it "model: VALUE" when the model's file gives this value (named
// model_<field> for tests); the box alone otherwise.
QWidget* with_model_value(QWidget* box, const char* field, const QString& value,
                          const QString& file) {
  if (value.isEmpty()) return box;
  auto* row = new QWidget(box->parentWidget());
  auto* layout = new QHBoxLayout(row);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(box, 1);
  auto* label = new QLabel(QObject::tr("model: %1").arg(value), row);
  label->setObjectName(QStringLiteral("model_%1").arg(QLatin1String(field)));
  label->setToolTip(QObject::tr("from %1").arg(file));
  label->setEnabled(false);  // drawn greyed: a hint, not a control
  layout->addWidget(label);
  return row;
}

QString number(const std::optional<double>& v) {
  return v ? QString::number(*v) : QString();
}

QString temperature_text(const SamplingDefaults& m) {
  if (m.do_sample == false) return QObject::tr("greedy (do_sample false)");
  return number(m.temperature);
}

}  // namespace

SamplingSettings defaultSamplingSettings(const SamplingDefaults& model) {
  SamplingSettings s;
  s.params = with_model_defaults(model, s.params);
  return s;
}

bool sameSampling(const SamplingSettings& a, const SamplingSettings& b) {
  const SamplingParams& x = a.params;
  const SamplingParams& y = b.params;
  return x.temperature == y.temperature && x.top_k == y.top_k && x.top_p == y.top_p &&
         x.min_p == y.min_p && x.repeat_penalty == y.repeat_penalty &&
         x.repeat_last_n == y.repeat_last_n && x.seed == y.seed && a.max_tokens == b.max_tokens;
}

SamplingDialog::SamplingDialog(const SamplingSettings& s, std::int64_t context_length,
                               const SamplingDefaults& model, QWidget* parent)
    : QDialog(parent), model_(model) {
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
  const QString file = QFileInfo(QString::fromStdString(model.source)).fileName();
  if (model.any() || !model.notes.empty()) {
    QString text =
        tr("Values marked \u201cmodel\u201d are the model's own, from its %1.").arg(file);
    for (const auto& note : model.notes)
      text += QStringLiteral("\n") + QString::fromStdString(note);
    auto* about = new QLabel(text, this);
    about->setObjectName(QStringLiteral("modelDefaultsNote"));
    about->setWordWrap(true);
    about->setToolTip(QString::fromStdString(model.source));
    form->addRow(about);
  }
  const QString path = QString::fromStdString(model.source);
  form->addRow(tr("Temperature"),
               with_model_value(temperature_, "temperature", temperature_text(model), path));
  form->addRow(tr("Top-k"),
               with_model_value(top_k_, "top_k",
                                model.top_k ? QString::number(*model.top_k) : QString(), path));
  form->addRow(tr("Top-p"), with_model_value(top_p_, "top_p", number(model.top_p), path));
  form->addRow(tr("Min-p"), with_model_value(min_p_, "min_p", number(model.min_p), path));
  form->addRow(tr("Repetition penalty"), with_model_value(repeat_penalty_, "repetition_penalty",
                                                          number(model.repetition_penalty), path));
  form->addRow(tr("Penalty looks back (tokens)"), repeat_last_n_);
  form->addRow(tr("Reply length (tokens)"), max_tokens_);
  form->addRow(tr("Seed"), seed_);
  auto* buttons = new QDialogButtonBox(
      QDialogButtonBox::Ok | QDialogButtonBox::Cancel | QDialogButtonBox::RestoreDefaults, this);
  QPushButton* reset = buttons->button(QDialogButtonBox::RestoreDefaults);
  reset->setText(model.any() ? tr("Model defaults") : tr("Defaults"));
  reset->setToolTip(model.any() ? tr("Every sampling value as a new chat starts: the model's own "
                                     "where %1 gives one, else KVScope's")
                                      .arg(file)
                                : tr("Every sampling value as a new chat starts"));
  form->addRow(buttons);
  connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  connect(reset, &QPushButton::clicked, this, &SamplingDialog::resetToModelDefaults);
}

void SamplingDialog::set_params(const SamplingParams& p) {
  temperature_->setValue(p.temperature);
  top_k_->setValue(p.top_k);
  top_p_->setValue(p.top_p);
  min_p_->setValue(p.min_p);
  repeat_penalty_->setValue(p.repeat_penalty);
  repeat_last_n_->setValue(p.repeat_last_n);
}

void SamplingDialog::resetToModelDefaults() {
  set_params(defaultSamplingSettings(model_).params);
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
