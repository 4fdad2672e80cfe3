#include "demos/prefix/prefix_page.h"

#include <QFormLayout>
#include <QGridLayout>
#include <QGroupBox>
#include <QLabel>
#include <QPushButton>
#include <QSpinBox>
#include <QTimer>
#include <QVBoxLayout>

#include <cmath>
#include <string_view>

#include "demos/common/controls.h"
#include "demos/prefix/block_view.h"
#include "kv/format/kv_format.h"
#include "kv/kv_cache_observer.h"
#include "plan/kv_footprint.h"
#include "sim/scenarios/prefix_sharing_scenario.h"
#include "widgets/number_text.h"

namespace kvscope::ui {
namespace {

constexpr int kPlayIntervalMs = 120;

QSpinBox* spin(QWidget* parent, const char* name, int min, int max, int value) {
  auto* s = new QSpinBox(parent);
  s->setObjectName(QLatin1String(name));
  s->setRange(min, max);
  s->setValue(value);
  return s;
}

QLabel* figure(QWidget* parent, const char* name) {
  auto* l = new QLabel(parent);
  l->setObjectName(QLatin1String(name));
  l->setTextInteractionFlags(Qt::TextSelectableByMouse);
  return l;
}

}  // namespace

PrefixSharingDemoPage::PrefixSharingDemoPage(QWidget* parent)
    : QWidget(parent), timer_(new QTimer(this)), view_(new PrefixBlockView(this)) {
  const QString intro =
      tr("<b>Prefix sharing.</b> N samples of one prompt (parallel sampling): the prompt's KV "
         "blocks are written once and shared by every sample (refcount N). When a sample "
         "writes into a shared block that still has free slots, the cache manager first "
         "copies it (copy-on-write); full shared blocks are never written and stay shared. "
         "Every figure comes from the engine's KvCacheManager.");
  auto* content = new QVBoxLayout;
  content->addWidget(view_);
  set_demo_layout(this, intro, make_controls_column(this, {build_controls(), build_figures()}),
                  content);

  timer_->setInterval(kPlayIntervalMs);
  connect(timer_, &QTimer::timeout, this, &PrefixSharingDemoPage::step);
  for (QSpinBox* s : {prompt_, samples_, generated_, block_size_}) {
    connect(s, &QSpinBox::valueChanged, this, &PrefixSharingDemoPage::reset);
  }
  reset();
}

PrefixSharingDemoPage::~PrefixSharingDemoPage() = default;

QWidget* PrefixSharingDemoPage::build_controls() {
  auto* box = new QGroupBox(tr("Scenario"), this);
  // At most (512 + 128) / 2 = 320 blocks per sample: a pixel each, even on a narrow page.
  prompt_ = spin(box, "promptTokens", 1, 512, 40);
  samples_ = spin(box, "samples", 1, 16, 4);
  generated_ = spin(box, "generatedTokens", 0, 128, 24);
  block_size_ = spin(box, "blockSize", 2, 128, 16);
  step_ = new QPushButton(tr("Step"), box);
  step_->setObjectName(QStringLiteral("step"));
  step_->setToolTip(tr("First step: prefill and fork. Then one token for every sample."));
  play_ = new QPushButton(tr("Play"), box);
  play_->setObjectName(QStringLiteral("play"));
  play_->setCheckable(true);
  run_ = new QPushButton(tr("Run to end"), box);
  run_->setObjectName(QStringLiteral("runToEnd"));
  auto* reset = new QPushButton(tr("Reset"), box);
  reset->setObjectName(QStringLiteral("reset"));
  connect(step_, &QPushButton::clicked, this, &PrefixSharingDemoPage::step);
  connect(play_, &QPushButton::toggled, this, &PrefixSharingDemoPage::setPlaying);
  connect(run_, &QPushButton::clicked, this, &PrefixSharingDemoPage::runToEnd);
  connect(reset, &QPushButton::clicked, this, &PrefixSharingDemoPage::reset);

  auto* form = new QFormLayout;
  form->addRow(tr("Prompt (tokens)"), prompt_);
  form->addRow(tr("Samples (N)"), samples_);
  form->addRow(tr("Tokens per sample"), generated_);
  form->addRow(tr("Block size (tokens)"), block_size_);
  auto* buttons = new QGridLayout;
  buttons->addWidget(step_, 0, 0);
  buttons->addWidget(play_, 0, 1);
  buttons->addWidget(run_, 1, 0);
  buttons->addWidget(reset, 1, 1);
  shape_ = new QLabel(box);
  shape_->setObjectName(QStringLiteral("cacheShape"));
  shape_->setWordWrap(true);
  auto* layout = new QVBoxLayout(box);
  layout->addLayout(form);
  layout->addLayout(buttons);
  layout->addWidget(shape_);
  return box;
}

QWidget* PrefixSharingDemoPage::build_figures() {
  auto* box = new QGroupBox(tr("From the cache manager"), this);
  progress_ = figure(box, "figureStep");
  tokens_ = figure(box, "figureTokens");
  used_ = figure(box, "figureUsedBlocks");
  separate_ = figure(box, "figureSeparateBlocks");
  shared_ = figure(box, "figureSharedBlocks");
  copies_ = figure(box, "figureCowCopies");
  saved_ = figure(box, "figureSaved");
  event_ = figure(box, "figureEvent");
  event_->setWordWrap(true);
  QFont bold = saved_->font();
  bold.setBold(true);
  saved_->setFont(bold);
  auto* form = new QFormLayout;
  form->addRow(tr("Step"), progress_);
  form->addRow(tr("Tokens per sample"), tokens_);
  form->addRow(tr("Blocks in use"), used_);
  form->addRow(tr("N separate copies"), separate_);
  form->addRow(tr("Shared (refcount > 1)"), shared_);
  form->addRow(tr("Copy-on-write copies"), copies_);
  form->addRow(tr("Memory saved"), saved_);
  auto* layout = new QVBoxLayout(box);
  layout->addLayout(form);
  layout->addWidget(event_);
  saved_->setToolTip(
      tr("N separate copies minus the shared cache; equal to the manager's shared savings: "
         "the sum over blocks of (refcount - 1) x block bytes"));
  return box;
}

bool PrefixSharingDemoPage::isPlaying() const {
  return timer_->isActive();
}

void PrefixSharingDemoPage::reset() {
  setPlaying(false);
  PrefixSharingParams p;
  p.prompt_tokens = prompt_->value();
  p.n_samples = samples_->value();
  p.generated_tokens = generated_->value();
  p.block_size = block_size_->value();
  scenario_ = std::make_unique<PrefixSharingScenario>(p);
  const KvCacheConfig config = PrefixSharingScenario::cache_config(p);
  // the scenario's own cache, as the managers are built from it
  const std::string_view dtype = kv_dtype_name(config.groups.front().k_dtype);
  shape_->setText(tr("Toy cache: %1 layers × %2 KV heads × head_dim %3, %4: %5 per token, "
                     "%6 per block of %7 tokens.")
                      .arg(kv_config_n_layers(config))
                      .arg(config.n_kv_heads)
                      .arg(config.head_dim)
                      .arg(QString::fromLatin1(dtype.data(), static_cast<qsizetype>(dtype.size())))
                      .arg(bytes_text(std::llround(kv_bytes_per_token(config))))
                      .arg(bytes_text(kv_block_set_bytes(config)))
                      .arg(p.block_size));
  refresh();
}

void PrefixSharingDemoPage::step() {
  const std::int64_t copies_before = scenario_->cow_copies();
  scenario_->step();
  refresh();
  const PrefixSharingParams& p = scenario_->params();
  const std::int64_t copies = scenario_->cow_copies() - copies_before;
  if (scenario_->steps_taken() == 1) {
    event_->setText(tr("Prefill: the prompt took %1 blocks, then %2 forks shared them.")
                        .arg(scenario_->shared().usage().n_used)
                        .arg(p.n_samples - 1));
  } else if (scenario_->steps_taken() > 1) {
    event_->setText(copies > 0 ? tr("Token %1: %2 copy-on-write copies of the shared tail.")
                                     .arg(scenario_->steps_taken() - 1)
                                     .arg(copies)
                               : tr("Token %1: no copies.").arg(scenario_->steps_taken() - 1));
  }
  if (scenario_->done()) setPlaying(false);
}

void PrefixSharingDemoPage::runToEnd() {
  setPlaying(false);
  while (!scenario_->done()) step();
}

void PrefixSharingDemoPage::setPlaying(bool playing) {
  playing = playing && !scenario_->done();
  if (playing) {
    timer_->start();
  } else {
    timer_->stop();
  }
  const QSignalBlocker block(play_);
  play_->setChecked(playing);
  play_->setText(playing ? tr("Pause") : tr("Play"));
}

void PrefixSharingDemoPage::refresh() {
  const PrefixSharingScenario& s = *scenario_;
  const CacheSnapshot shared = snapshot_of(s.shared());
  const CacheSnapshot separate = snapshot_of(s.separate());
  progress_->setText(tr("%1 / %2").arg(s.steps_taken()).arg(s.total_steps()));
  tokens_->setText(QString::number(s.tokens_per_sample()));
  used_->setText(tr("%1 blocks \u00b7 %2").arg(shared.n_used).arg(bytes_text(shared.used_bytes)));
  separate_->setText(
      tr("%1 blocks \u00b7 %2").arg(separate.n_used).arg(bytes_text(separate.used_bytes)));
  shared_->setText(tr("%1 blocks").arg(shared.n_shared));
  copies_->setText(QString::number(s.cow_copies()));
  const std::int64_t saved = separate.used_bytes - shared.used_bytes;
  const double percent = separate.used_bytes > 0 ? 100.0 * static_cast<double>(saved) /
                                                       static_cast<double>(separate.used_bytes)
                                                 : 0.0;
  saved_->setText(tr("%1 (%2%)").arg(bytes_text(saved)).arg(percent, 0, 'f', 1));
  if (s.steps_taken() == 0) event_->clear();
  step_->setEnabled(!s.done());
  run_->setEnabled(!s.done());
  play_->setEnabled(!s.done());
  view_->setScenario(s);
}

}  // namespace kvscope::ui
