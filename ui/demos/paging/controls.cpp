#include "demos/paging/controls.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QSignalBlocker>
#include <QSlider>
#include <QSpinBox>
#include <QStyle>
#include <QToolButton>
#include <QVBoxLayout>

#include <array>

#include "demos/paging/names.h"
#include "sim/sim_config.h"
#include "sim/trace/trace_presets.h"
#include "widgets/slider_spin.h"

namespace kvscope::ui {
namespace {

constexpr std::array<int, 7> kSpeeds = {1, 2, 5, 10, 25, 50, 100};
constexpr int kDefaultSpeed = 3;  // 10 steps per tick

QSpinBox* spin(QWidget* parent, int min, int max, int step, int width) {
  auto* s = new QSpinBox(parent);
  s->setRange(min, max);
  s->setSingleStep(step);
  s->setMinimumWidth(width);
  s->setAccelerated(true);
  return s;
}

void add_labelled(QHBoxLayout* row, QWidget* parent, const QString& label, QWidget* w) {
  auto* l = new QLabel(label, parent);
  l->setBuddy(w);
  row->addWidget(l);
  row->addWidget(w);
  row->addSpacing(10);
}

}  // namespace

PagingDemoControls::PagingDemoControls(QWidget* parent)
    : QWidget(parent),
      trace_(new QComboBox(this)),
      requests_(spin(this, 1, 2000, 10, 70)),
      seed_(spin(this, 0, 999999, 1, 70)),
      capacity_(spin(this, 64, 131072, 1024, 90)),
      max_context_(spin(this, 2, 65536, 256, 80)),
      block_size_(new SliderSpin(1, static_cast<int>(kSimMaxBlockSize), 16, this)),
      play_(new QToolButton(this)),
      step_(new QToolButton(this)),
      restart_(new QToolButton(this)),
      speed_(new QComboBox(this)),
      position_(new QSlider(Qt::Horizontal, this)),
      position_label_(new QLabel(this)) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(4);
  layout->addWidget(build_settings_row());
  layout->addWidget(build_playback_row());

  for (QSpinBox* s : {requests_, seed_, capacity_, max_context_}) {
    connect(s, &QSpinBox::valueChanged, this, [this] {
      if (!loading_preset_) emit settingsChanged();
    });
  }
  connect(block_size_, &SliderSpin::valueChanged, this, &PagingDemoControls::settingsChanged);
  connect(trace_, &QComboBox::currentIndexChanged, this, &PagingDemoControls::apply_preset);
  connect(play_, &QToolButton::toggled, this, [this](bool on) {
    setPlaying(on);
    emit playToggled(on);
  });
  connect(step_, &QToolButton::clicked, this, &PagingDemoControls::stepRequested);
  connect(restart_, &QToolButton::clicked, this, &PagingDemoControls::restartRequested);
  connect(position_, &QSlider::valueChanged, this,
          [this](int v) { emit seekRequested(static_cast<qint64>(v)); });
  apply_preset(0);
}

QWidget* PagingDemoControls::build_settings_row() {
  auto* w = new QWidget(this);
  auto* row = new QHBoxLayout(w);
  row->setContentsMargins(0, 0, 0, 0);
  row->setSpacing(4);
  for (const TracePreset& p : trace_presets()) {
    trace_->addItem(trace_label(p), QString::fromStdString(p.name));
    trace_->setItemData(trace_->count() - 1, trace_description(p), Qt::ToolTipRole);
  }
  add_labelled(row, w, tr("&Trace"), trace_);
  add_labelled(row, w, tr("&Requests"), requests_);
  seed_->setValue(1);  // the CLI's default
  add_labelled(row, w, tr("S&eed"), seed_);
  capacity_->setSuffix(tr(" slots"));
  capacity_->setToolTip(tr("KV memory, in token slots"));
  add_labelled(row, w, tr("&Capacity"), capacity_);
  max_context_->setToolTip(tr("Longest sequence; what reserve-max reserves for each"));
  add_labelled(row, w, tr("&Max context"), max_context_);
  block_size_->slider()->setMinimumWidth(140);
  block_size_->slider()->setToolTip(tr("Paged block size, in tokens"));
  block_size_->spinBox()->setMinimumWidth(60);
  auto* label = new QLabel(tr("&Block size"), w);
  label->setBuddy(block_size_->spinBox());
  row->addWidget(label);
  row->addWidget(block_size_, 1);
  return w;
}

QWidget* PagingDemoControls::build_playback_row() {
  auto* w = new QWidget(this);
  auto* row = new QHBoxLayout(w);
  row->setContentsMargins(0, 0, 0, 0);
  row->setSpacing(4);
  play_->setCheckable(true);
  play_->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
  setPlaying(false);
  step_->setText(tr("Step"));
  step_->setIcon(style()->standardIcon(QStyle::SP_MediaSkipForward));
  step_->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
  step_->setToolTip(tr("Run one step"));
  restart_->setText(tr("Restart"));
  restart_->setIcon(style()->standardIcon(QStyle::SP_MediaSkipBackward));
  restart_->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
  for (const int s : kSpeeds) speed_->addItem(tr("%n step(s) per frame", nullptr, s), s);
  speed_->setCurrentIndex(kDefaultSpeed);
  position_->setRange(0, 0);
  position_->setToolTip(tr("Drag to any step"));
  position_label_->setMinimumWidth(
      fontMetrics().horizontalAdvance(tr("step %1 / %2").arg(88888).arg(88888)));
  row->addWidget(play_);
  row->addWidget(step_);
  row->addWidget(restart_);
  row->addSpacing(8);
  row->addWidget(new QLabel(tr("Speed"), w));
  row->addWidget(speed_);
  row->addSpacing(8);
  row->addWidget(position_, 1);
  row->addWidget(position_label_);
  return w;
}

void PagingDemoControls::apply_preset(int index) {
  if (index < 0 || static_cast<std::size_t>(index) >= trace_presets().size()) return;
  const TracePreset& p = trace_presets()[static_cast<std::size_t>(index)];
  loading_preset_ = true;
  requests_->setValue(static_cast<int>(p.spec.n_requests));
  capacity_->setValue(static_cast<int>(p.capacity));
  max_context_->setValue(static_cast<int>(p.spec.max_context));
  trace_->setToolTip(trace_description(p));
  loading_preset_ = false;
  emit settingsChanged();
}

QSlider* PagingDemoControls::blockSizeSlider() const {
  return block_size_->slider();
}

QSpinBox* PagingDemoControls::blockSizeSpin() const {
  return block_size_->spinBox();
}

PagingSettings PagingDemoControls::settings() const {
  PagingSettings s;
  s.preset = trace_->currentData().toString().toStdString();
  s.requests = requests_->value();
  s.seed = seed_->value();
  s.capacity = capacity_->value();
  s.max_context = max_context_->value();
  s.block_size = block_size_->value();
  return s;
}

int PagingDemoControls::stepsPerTick() const {
  return speed_->currentData().toInt();
}

void PagingDemoControls::setPosition(std::int64_t step, std::int64_t last) {
  const QSignalBlocker block(position_);
  position_->setRange(0, static_cast<int>(last));
  position_->setValue(static_cast<int>(step));
  position_label_->setText(tr("step %1 / %2").arg(step).arg(last));
}

void PagingDemoControls::setPlaying(bool playing) {
  const QSignalBlocker block(play_);
  play_->setChecked(playing);
  play_->setText(playing ? tr("Pause") : tr("Play"));
  play_->setIcon(style()->standardIcon(playing ? QStyle::SP_MediaPause : QStyle::SP_MediaPlay));
}

}  // namespace kvscope::ui
