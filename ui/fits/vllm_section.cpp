#include "fits/vllm_section.h"

#include <QClipboard>
#include <QComboBox>
#include <QEvent>
#include <QFontDatabase>
#include <QFormLayout>
#include <QGuiApplication>
#include <QHBoxLayout>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QRegularExpression>
#include <QScrollArea>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QVBoxLayout>

#include <algorithm>
#include <exception>

#include "fits/stack_bar.h"
#include "plan/units.h"
#include "plan/vllm_explainer.h"
#include "plan/vllm_solvers.h"
#include "plan/vllm_swap.h"
#include "widgets/number_text.h"
#include "window/app_palette.h"

namespace kvscope::ui {

namespace {

// Red that reads on the app's palette, set again when View > Dark theme changes it
// (FitsVllmSection::changeEvent).
QString error_style() {
  return QStringLiteral("color: %1;").arg(error_text_color(QGuiApplication::palette()).name());
}

// "vLLM 0.6.0-0.6.4 (V0 engine)", the engine's word translated; the releases as they are.
QString release_label(const VllmVersionInfo& v) {
  const QString label = QString::fromUtf8(v.label.data(), static_cast<qsizetype>(v.label.size()));
  static const QRegularExpression parts(QStringLiteral(R"(^vLLM (\S+) \((V\d) engine\)$)"));
  const QRegularExpressionMatch m = parts.match(label);
  return m.hasMatch() ? FitsVllmSection::tr("vLLM %1 (%2 engine)").arg(m.captured(1), m.captured(2))
                      : label;
}

}  // namespace

FitsVllmSection::FitsVllmSection(QWidget* parent)
    : QWidget(parent),
      tp_(new QSpinBox(this)),
      pp_(new QSpinBox(this)),
      kv_dtype_(new QComboBox(this)),
      version_(new QComboBox(this)),
      weights_(new QComboBox(this)),
      vllm_verdict_(new QLabel(this)),
      vllm_terms_(new QPlainTextEdit(this)),
      gpus_(new QLabel(this)),
      verdict_(new QLabel(this)),
      error_(new QLabel(this)),
      bars_box_(new QWidget),
      bars_layout_(new QVBoxLayout(bars_box_)),
      command_(new QPlainTextEdit(this)),
      copy_(new QPushButton(tr("Copy"), this)) {
  tp_->setRange(1, static_cast<int>(kMaxNodeGpus));
  pp_->setRange(1, static_cast<int>(kMaxNodeGpus));
  tp_->setToolTip(tr("--tensor-parallel-size: GPUs each layer's heads are split over"));
  pp_->setToolTip(tr("--pipeline-parallel-size: stages the layers are split into"));
  for (const ServingKvDtype d : {ServingKvDtype::Auto, ServingKvDtype::Fp8}) {
    kv_dtype_->addItem(QString::fromUtf8(serving_kv_dtype_name(d).data()), static_cast<int>(d));
  }
  for (const VllmVersionInfo& v : vllm_versions()) {
    version_->addItem(release_label(v), static_cast<int>(v.version));
  }
  version_->setCurrentIndex(version_->findData(static_cast<int>(kLatestVllmVersion)));
  version_->setToolTip(tr("The vLLM release whose memory accounting to follow"));
  for (const VllmWeightFormat f :
       {VllmWeightFormat::Bf16, VllmWeightFormat::Fp8, VllmWeightFormat::Awq,
        VllmWeightFormat::Gptq, VllmWeightFormat::Bnb}) {
    const std::string_view name = vllm_weight_format_name(f);
    weights_->addItem(QString::fromUtf8(name.data(), static_cast<int>(name.size())),
                      static_cast<int>(f));
  }
  weights_->setToolTip(tr("How the checkpoint vllm serve loads stores its linear layers"));
  verdict_->setWordWrap(true);
  QFont bold = verdict_->font();
  bold.setBold(true);
  vllm_verdict_->setWordWrap(true);
  vllm_verdict_->setFont(bold);
  vllm_verdict_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  vllm_terms_->setReadOnly(true);
  vllm_terms_->setLineWrapMode(QPlainTextEdit::WidgetWidth);
  error_->setWordWrap(true);
  error_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  error_->setStyleSheet(error_style());

  bars_layout_->setContentsMargins(0, 0, 0, 0);
  bars_layout_->setSpacing(6);
  bars_layout_->addStretch(1);
  auto* scroll = new QScrollArea(this);
  scroll->setWidget(bars_box_);
  scroll->setWidgetResizable(true);
  scroll->setFrameShape(QFrame::NoFrame);
  scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  scroll->viewport()->setAutoFillBackground(false);
  bars_box_->setAutoFillBackground(false);

  command_->setReadOnly(true);
  command_->setLineWrapMode(QPlainTextEdit::NoWrap);
  QFont mono = QFontDatabase::systemFont(QFontDatabase::FixedFont);
  mono.setPointSizeF(font().pointSizeF() * 0.9);
  command_->setFont(mono);
  vllm_terms_->setFont(mono);

  auto* shape = new QHBoxLayout;
  shape->addWidget(new QLabel(tr("TP"), this));
  shape->addWidget(tp_);
  shape->addSpacing(8);
  shape->addWidget(new QLabel(tr("PP"), this));
  shape->addWidget(pp_);
  shape->addSpacing(8);
  shape->addWidget(gpus_);
  shape->addStretch(1);
  shape->addWidget(new QLabel(tr("KV cache dtype"), this));
  shape->addWidget(kv_dtype_);

  auto* release = new QHBoxLayout;
  release->addWidget(new QLabel(tr("vLLM"), this));
  release->addWidget(version_);
  release->addSpacing(8);
  release->addWidget(new QLabel(tr("Checkpoint"), this));
  release->addWidget(weights_);
  release->addStretch(1);

  auto* engine_note =
      new QLabel(tr("KVScope's own engine on the same GPUs (16-bit weights from the Hugging Face "
                    "repository), for comparison:"),
                 this);
  engine_note->setWordWrap(true);
  auto* left = new QVBoxLayout;
  left->addLayout(shape);
  left->addLayout(release);
  left->addWidget(vllm_verdict_);
  left->addWidget(engine_note);
  left->addWidget(verdict_);
  left->addWidget(error_);
  left->addWidget(scroll, 1);

  auto* copy_row = new QHBoxLayout;
  copy_row->addWidget(new QLabel(tr("Command"), this));
  copy_row->addStretch(1);
  copy_row->addWidget(copy_);
  auto* right = new QVBoxLayout;
  right->addWidget(new QLabel(tr("vLLM's accounting, per GPU"), this));
  right->addWidget(vllm_terms_, 3);
  right->addLayout(copy_row);
  right->addWidget(command_, 2);

  auto* layout = new QHBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  layout->setSpacing(12);
  layout->addLayout(left, 1);
  layout->addLayout(right, 1);

  connect(tp_, &QSpinBox::valueChanged, this, &FitsVllmSection::on_shape_changed);
  connect(pp_, &QSpinBox::valueChanged, this, &FitsVllmSection::on_shape_changed);
  connect(kv_dtype_, &QComboBox::currentIndexChanged, this, &FitsVllmSection::recompute);
  connect(version_, &QComboBox::currentIndexChanged, this, &FitsVllmSection::recompute);
  connect(weights_, &QComboBox::currentIndexChanged, this, &FitsVllmSection::recompute);
  connect(copy_, &QPushButton::clicked, this,
          [this] { QGuiApplication::clipboard()->setText(command_->toPlainText()); });
  on_shape_changed();
}

void FitsVllmSection::setInputs(const FitsInputs& inputs, const QString& model) {
  inputs_ = inputs;
  model_ = model;
  recompute();
}

// TP x PP stays within one node: each box's maximum is what the other leaves.
void FitsVllmSection::on_shape_changed() {
  {
    const QSignalBlocker block_tp(tp_);
    const QSignalBlocker block_pp(pp_);
    tp_->setMaximum(static_cast<int>(kMaxNodeGpus) / pp_->value());
    pp_->setMaximum(static_cast<int>(kMaxNodeGpus) / tp_->value());
  }
  gpus_->setText(tr("GPUs in the node: %1").arg(tp_->value() * pp_->value()));
  recompute();
}

// The request of the CLI's node plan (plan_node.cpp): the single-GPU request with the
// shape and the serving KV dtype; vllm serve's arguments as its --emit vllm fills them.
void FitsVllmSection::recompute() {
  if (model_.isEmpty() || inputs_.n_params < 1) {
    plan_.reset();
    show_error(tr("A node plan splits a preset's parameters: choose a model preset."));
    return;
  }
  // vllm serve loads the repository's 16-bit weights, whatever the page's Weights says (the
  // CLI's node plans default to f16 for the same reason): plan what the command will load.
  FitsInputs served = inputs_;
  served.weight_type = WeightType::F16;
  served.exact_weights.reset();
  request_ = {};
  request_.base = fits_request(served);
  request_.n_params = inputs_.n_params;
  request_.shape.tp = tp_->value();
  request_.shape.pp = pp_->value();
  request_.kv_dtype = static_cast<ServingKvDtype>(kv_dtype_->currentData().toInt());
  try {
    plan_ = plan_parallel(request_);
  } catch (const std::exception& e) {
    plan_.reset();
    show_error(QString::fromStdString(e.what()));
    return;
  }
  // vLLM's plan first: its release decides the command's --swap-space (vllm_swap.h); where
  // vLLM refuses the request the command keeps vLLM's default.
  show_vllm_plan();
  args_ = vllm_args_for(model_.toStdString(), request_,
                        vllm_plan_ ? plan_vllm_swap(*vllm_plan_) : VllmSwap{});
  show_plan(*plan_);
}

// vLLM's own accounting of the command's server: its verdict above the bars, its terms beside
// the command.
void FitsVllmSection::show_vllm_plan() {
  vllm_plan_.reset();
  try {
    const VllmRequest vr =
        vllm_memory_request(request_, request_.base.budget.total_bytes,
                            static_cast<VllmVersion>(version_->currentData().toInt()),
                            static_cast<VllmWeightFormat>(weights_->currentData().toInt()));
    vllm_plan_ = plan_vllm_memory(vr);
    const std::int64_t longest = vllm_max_model_len(vr);
    const VllmMemoryPlan& p = *vllm_plan_;
    QString text =
        p.starts ? tr("vLLM: KV cache %1 tokens (%2 blocks of %3); maximum concurrency for %4 "
                      "tokens per request: %5x")
                       .arg(count_text(p.kv_tokens), count_text(p.gpu_blocks))
                       .arg(p.request.block_size)
                       .arg(count_text(p.request.max_model_len))
                       .arg(p.max_concurrency, 0, 'f', 2)
                 : tr("vLLM does not start: %1").arg(QString::fromStdString(p.refusal));
    text += longest > 0 ? tr(". Largest max_model_len that starts: %1").arg(count_text(longest))
                        : tr(". No max_model_len starts on this GPU.");
    vllm_verdict_->setText(text);
    vllm_verdict_->setStyleSheet(vllm_plan_->starts ? QString() : error_style());
    vllm_terms_->setPlainText(
        QString::fromStdString(explain_vllm_memory(*vllm_plan_) +
                               explain_vllm_swap(*vllm_plan_, plan_vllm_swap(*vllm_plan_))));
  } catch (const std::exception& e) {
    vllm_verdict_->setText(tr("vLLM: %1").arg(QString::fromStdString(e.what())));
    vllm_verdict_->setStyleSheet(error_style());
    vllm_terms_->clear();
  }
  vllm_verdict_->show();
}

void FitsVllmSection::show_plan(const ParallelPlan& plan) {
  error_->hide();
  clear_bars();
  std::int64_t short_bytes = 0;
  for (std::size_t i = 0; i < plan.stages.size(); ++i) {
    const StagePlan& s = plan.stages[i];
    short_bytes = std::max(short_bytes, -s.plan.margin_bytes);
    auto* row = new QWidget(bars_box_);
    auto* row_layout = new QVBoxLayout(row);
    row_layout->setContentsMargins(0, 0, 0, 0);
    row_layout->setSpacing(2);
    // The stage's tp GPUs are alike: one bar for them all.
    const std::int64_t tp = plan.shape.tp;
    const auto first_gpu = static_cast<std::int64_t>(i) * tp;
    const QString gpus = tp == 1 ? tr("GPU %1").arg(first_gpu)
                                 : tr("GPUs %1-%2, each").arg(first_gpu).arg(first_gpu + tp - 1);
    const QString title =
        tr("%1 (stage %2, layers %3-%4): weights %5, KV %6, workspace %7")
            .arg(gpus)
            .arg(static_cast<qlonglong>(i) + 1)
            .arg(s.stage.first_layer)
            .arg(s.stage.first_layer + s.stage.n_layers - 1)
            .arg(bytes_text(s.plan.weights.bytes), bytes_text(s.plan.kv.pool_bytes_needed),
                 bytes_text(s.plan.workspace.total()));
    auto* label = new QLabel(title, row);
    label->setWordWrap(true);
    row_layout->addWidget(label);
    auto* bar = new FitsStackBar(row);
    bar->setPlan(s.plan, request_.base.budget.total_bytes);
    row_layout->addWidget(bar);
    bars_layout_->insertWidget(bars_layout_->count() - 1, row);
    bars_.push_back(bar);
    bar_rows_.push_back(row);
  }
  const QString kv = tr("KV cache for %1 tokens (%2 KV heads per GPU)")
                         .arg(count_text(plan.kv_tokens))
                         .arg(plan.kv_heads_per_rank);
  const QString shape = tr("TP %1 x PP %2").arg(plan.shape.tp).arg(plan.shape.pp);
  if (plan.fits) {
    verdict_->setText(tr("Fits on %1: %2").arg(shape, kv));
    verdict_->setStyleSheet(QString());
  } else {
    verdict_->setText(tr("Does not fit on %1, %2 short on the fullest GPU: %3")
                          .arg(shape, bytes_text(short_bytes), kv));
    verdict_->setStyleSheet(error_style());
  }
  verdict_->show();
  command_->setPlainText(QString::fromStdString(vllm_serve_command(args_)));
  copy_->setEnabled(true);
}

void FitsVllmSection::show_error(const QString& message) {
  clear_bars();
  verdict_->hide();
  vllm_plan_.reset();
  vllm_verdict_->hide();
  vllm_terms_->clear();
  error_->setText(message);
  error_->show();
  command_->clear();
  copy_->setEnabled(false);
}

void FitsVllmSection::clear_bars() {
  for (QWidget* row : bar_rows_) delete row;
  bar_rows_.clear();
  bars_.clear();
}

void FitsVllmSection::changeEvent(QEvent* event) {
  QWidget::changeEvent(event);
  if (event->type() != QEvent::PaletteChange) return;
  for (QLabel* label : {error_, verdict_, vllm_verdict_}) {
    if (!label->styleSheet().isEmpty()) label->setStyleSheet(error_style());  // the red ones
  }
}

}  // namespace kvscope::ui
