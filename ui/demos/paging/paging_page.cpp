#include "demos/paging/paging_page.h"

#include <QEvent>
#include <QHBoxLayout>
#include <QLabel>
#include <QVBoxLayout>

#include <algorithm>

#include "demos/paging/block_map.h"
#include "demos/paging/chart.h"
#include "demos/paging/controls.h"
#include "demos/paging/names.h"
#include "demos/paging/summary.h"
#include "demos/paging/waste_bar.h"
#include "sim/trace/trace_presets.h"
#include "util/error.h"
#include "window/app_palette.h"

namespace kvscope::ui {
namespace {

constexpr int kTickMs = 40;    // 25 frames a second
constexpr int kMergeMs = 150;  // settings changes within this are one re-run

// Whole percents keep the three columns' figure lines short; "<1%" keeps a trace visible.
QString percent_of(std::int64_t part, std::int64_t whole) {
  const double p = whole > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0;
  if (part > 0 && p < 0.5) return QStringLiteral("<1%");
  return QStringLiteral("%1%").arg(p, 0, 'f', 0);
}

QString column_title(SimPolicy policy, const SimConfig& c) {
  switch (policy) {
    case SimPolicy::ReserveMax:
      return PagingDemoPage::tr("Contiguous: reserve max context (%1 slots each)")
          .arg(c.max_context);
    case SimPolicy::ExactFit:
      return PagingDemoPage::tr("Contiguous: exact size, first fit");
    case SimPolicy::Paged:
      return PagingDemoPage::tr("Paged: blocks of %1 (%2 blocks)")
          .arg(c.block_size)
          .arg(sim_paged_blocks(c));
  }
  return {};
}

QString column_status(const PolicyRun& run, std::int64_t step, std::int64_t requests) {
  const auto n = static_cast<std::int64_t>(run.frames.size());
  if (step <= 0 || n == 0) return PagingDemoPage::tr("before step 0 \u00b7 press Play or Step");
  const SimFrame& f = run.frames[static_cast<std::size_t>(std::min(step, n) - 1)];
  QString text = PagingDemoPage::tr(
                     "step %1 \u00b7 %2 running \u00b7 %3 waiting \u00b7 "
                     "%4/%5 admitted \u00b7 %6 done")
                     .arg(f.step)
                     .arg(f.running)
                     .arg(f.waiting)
                     .arg(f.admitted)
                     .arg(requests)
                     .arg(f.finished);
  if (step >= n) text += PagingDemoPage::tr(" (all served)");
  return text;
}

QString column_figures(const PolicyRun& run, std::int64_t step, std::int64_t capacity) {
  const auto n = static_cast<std::int64_t>(run.frames.size());
  if (step <= 0 || n == 0) return PagingDemoPage::tr("%1 slots free").arg(capacity);
  const SimFrame& f = run.frames[static_cast<std::size_t>(std::min(step, n) - 1)];
  return PagingDemoPage::tr(
             "stored %1 \u00b7 reserved %2 \u00b7 internal %3 \u00b7 external %4 "
             "\u00b7 free %5")
      .arg(percent_of(f.stored, capacity), percent_of(f.reserved, capacity),
           percent_of(f.internal, capacity), percent_of(f.external, capacity),
           percent_of(f.free, capacity));
}

}  // namespace

PagingDemoPage::PagingDemoPage(QWidget* parent)
    : QWidget(parent),
      controls_(new PagingDemoControls(this)),
      info_(new QLabel(this)),
      error_(new QLabel(this)),
      block_map_(new PagingBlockMap(this)),
      chart_(new PagingUtilisationChart(this)),
      waste_(new PagingWasteBar(this)),
      summary_(new PagingSummaryTable(this)) {
  info_->setWordWrap(true);
  error_->setWordWrap(true);
  error_->setObjectName(QStringLiteral("pagingError"));
  restyle_error();
  error_->hide();
  auto* bottom = new QHBoxLayout;
  bottom->setSpacing(10);
  bottom->addWidget(chart_, 5);
  bottom->addWidget(waste_, 4);
  bottom->addWidget(summary_, 4);
  for (QWidget* w : {static_cast<QWidget*>(chart_), static_cast<QWidget*>(waste_),
                     static_cast<QWidget*>(summary_)}) {
    w->setMinimumHeight(250);
  }
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(8, 8, 8, 8);
  layout->setSpacing(6);
  layout->addWidget(controls_);
  layout->addWidget(info_);
  layout->addWidget(error_);
  layout->addWidget(block_map_, 5);
  layout->addLayout(bottom, 3);

  rerun_timer_.setSingleShot(true);
  rerun_timer_.setInterval(kMergeMs);
  connect(&rerun_timer_, &QTimer::timeout, this, &PagingDemoPage::rerunNow);
  play_timer_.setInterval(kTickMs);
  connect(&play_timer_, &QTimer::timeout, this, &PagingDemoPage::tick);
  connect(controls_, &PagingDemoControls::settingsChanged, this, [this] { rerun_timer_.start(); });
  connect(controls_, &PagingDemoControls::playToggled, this,
          [this](bool on) { on ? play() : pause(); });
  connect(controls_, &PagingDemoControls::stepRequested, this, &PagingDemoPage::stepOnce);
  connect(controls_, &PagingDemoControls::restartRequested, this, [this] { seek(0); });
  connect(controls_, &PagingDemoControls::seekRequested, this, [this](qint64 step) { seek(step); });
  rerunNow();
}

QString PagingDemoPage::errorText() const {
  return error_->isHidden() ? QString() : error_->text();
}

void PagingDemoPage::rerunNow() {
  rerun_timer_.stop();
  const PagingSettings s = controls_->settings();
  try {
    TraceSpec spec = find_trace_preset(s.preset).spec;
    spec.n_requests = s.requests;
    spec.seed = static_cast<std::uint64_t>(s.seed);
    spec.max_context = s.max_context;
    const SimConfig config{s.capacity, s.block_size, s.max_context};
    validate_sim_config(config);
    std::vector<SimRequest> trace = generate_trace(spec);
    playback_.reset(trace, config);
    result_ = run_simulation(std::move(trace), config);
    show_error({});
  } catch (const Error& e) {
    result_.reset();
    playback_.clear();
    pause();
    show_error(QString::fromStdString(e.what()));
  }
  chart_->setResult(result());
  waste_->setResult(result());
  summary_->setResult(result());
  show_trace_info();
  show_position();
}

void PagingDemoPage::show_error(const QString& message) {
  error_->setText(message);
  error_->setVisible(!message.isEmpty());
}

void PagingDemoPage::show_trace_info() {
  if (!result_) {
    info_->clear();
    return;
  }
  const TracePreset& preset = find_trace_preset(controls_->settings().preset);
  double prompt = 0, output = 0;
  for (const SimRequest& r : result_->trace) {
    prompt += static_cast<double>(r.prompt);
    output += static_cast<double>(r.output);
  }
  const auto n = static_cast<double>(result_->trace.size());
  info_->setText(tr("%1. This trace: %2 requests, mean prompt %3 and output %4 tokens, the last "
                    "arriving at step %5. One step = every running sequence stores one token.")
                     .arg(trace_description(preset))
                     .arg(result_->trace.size())
                     .arg(prompt / n, 0, 'f', 0)
                     .arg(output / n, 0, 'f', 0)
                     .arg(result_->trace.back().arrival));
}

void PagingDemoPage::play() {
  if (!result_) return;
  if (playback_.finished()) seek(0);
  play_timer_.start();
  controls_->setPlaying(true);
}

void PagingDemoPage::pause() {
  play_timer_.stop();
  controls_->setPlaying(false);
}

void PagingDemoPage::stepOnce() {
  pause();
  playback_.advance(1);
  show_position();
}

void PagingDemoPage::seek(std::int64_t step) {
  playback_.seek(std::max<std::int64_t>(0, step));
  show_position();
}

void PagingDemoPage::tick() {
  playback_.advance(controls_->stepsPerTick());
  show_position();
  if (playback_.finished()) pause();
}

void PagingDemoPage::show_position() {
  const std::int64_t step = playback_.step();
  controls_->setPosition(step, result_ ? result_->max_steps() : 0);
  chart_->setCurrentStep(step);
  if (!result_) {
    block_map_->setColumns({});
    block_map_->setPlaceholder(tr("No simulation: fix the settings above."));
    return;
  }
  const std::vector<SimBlockMap> maps = playback_.maps();
  std::vector<PagingMapColumn> columns;
  for (std::size_t i = 0; i < result_->runs.size(); ++i) {
    const PolicyRun& run = result_->runs[i];
    const auto requests = static_cast<std::int64_t>(result_->trace.size());
    columns.push_back({column_title(run.policy, result_->config),
                       column_status(run, step, requests),
                       column_figures(run, step, result_->config.capacity), maps[i]});
  }
  block_map_->setColumns(std::move(columns));
}

void PagingDemoPage::changeEvent(QEvent* event) {
  QWidget::changeEvent(event);
  if (event->type() == QEvent::PaletteChange) restyle_error();
}

// Red that reads on the page's palette, set again when View > Dark theme changes it.
void PagingDemoPage::restyle_error() {
  error_->setStyleSheet(QStringLiteral("QLabel { color: %1; font-weight: bold; }")
                            .arg(error_text_color(palette()).name()));
}

}  // namespace kvscope::ui
