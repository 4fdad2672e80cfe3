#include "panel/live_panel.h"

#include <QCheckBox>
#include <QElapsedTimer>
#include <QGridLayout>
#include <QLabel>
#include <QVBoxLayout>

#include "panel/block_map_widget.h"
#include "panel/fragmentation_chart.h"
#include "panel/layer_chart.h"
#include "panel/memory_chart.h"
#include "plan/units.h"

namespace kvscope::ui {
namespace {

QString bytes(std::int64_t n) {
  return QString::fromStdString(human_bytes(n));
}

}  // namespace

LivePanel::LivePanel(QWidget* parent)
    : QWidget(parent),
      summary_(new QLabel(this)),
      show_free_(new QCheckBox(tr("Draw free memory"), this)),
      block_map_(new BlockMapWidget(this)),
      fragmentation_(new FragmentationChart(this)),
      memory_(new MemoryChart(kDeviceMemory, this)),
      ram_memory_(new MemoryChart(kSplitRam, this)),
      layers_(new LayerChart(this)),
      charts_(new QGridLayout) {
  summary_->setWordWrap(true);
  summary_->setTextFormat(Qt::PlainText);
  show_free_->setChecked(false);
  show_free_->setToolTip(
      tr("Stack the device's free memory on top (turn off to zoom in on "
         "what the model uses)"));
  draw_timer_.setSingleShot(true);
  draw_timer_.setInterval(0);
  connect(&draw_timer_, &QTimer::timeout, this, &LivePanel::draw_pending);
  connect(show_free_, &QCheckBox::toggled, this, [this](bool show) {
    for (MemoryChart* m : {memory_, ram_memory_}) {
      m->setShowFree(show);
      m->update(history_);
    }
  });

  auto* top = new QHBoxLayout;
  top->addWidget(summary_, 1);
  top->addWidget(show_free_, 0, Qt::AlignTop);
  charts_->setSpacing(4);
  arrange_charts(false);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(4);
  layout->addLayout(top);
  layout->addWidget(block_map_, 3);
  layout->addLayout(charts_, 5);
  reset();
}

// Every frame goes into the history (a few numbers); only drawing is merged.
void LivePanel::setFrame(const PanelFrame& frame) {
  history_.add(frame);
  pending_ = frame;
  if (!draw_timer_.isActive()) draw_timer_.start();
}

void LivePanel::setChatNames(std::map<ChatId, QString> names) {
  block_map_->setChatNames(std::move(names));
}

void LivePanel::reset() {
  pending_.reset();
  last_.reset();
  history_.clear();
  block_map_->setFrame({});
  fragmentation_->update(history_);
  memory_->update(history_);
  ram_memory_->update(history_);
  arrange_charts(false);
  layers_->update({});
  summary_->setText(tr("KV cache: waiting for a model"));
}

void LivePanel::draw_pending() {
  if (!pending_) return;
  QElapsedTimer clock;
  clock.start();
  last_ = std::move(pending_);
  pending_.reset();
  const PanelFrame& frame = *last_;
  block_map_->setFrame(frame);
  fragmentation_->update(history_);
  memory_->update(history_);
  arrange_charts(frame.split.has_value());
  if (frame.split) ram_memory_->update(history_);
  layers_->update(frame);
  update_summary(frame);
  ++frames_drawn_;
  update_ns_ += clock.nsecsElapsed();
}

void LivePanel::update_summary(const PanelFrame& frame) {
  const CacheSnapshot& c = frame.cache;
  summary_->setText(
      tr("KV pool %1 in %2 blocks of %3 tokens \u00b7 %4 in use \u00b7 %5 shared (saves %6) "
         "\u00b7 %7 sequences \u00b7 %8")
          .arg(bytes(c.pool_bytes))
          .arg(c.n_blocks)
          .arg(c.block_size)
          .arg(c.n_used)
          .arg(c.n_shared)
          .arg(bytes(c.shared_savings_bytes))
          .arg(c.sequences.size())
          .arg(devices_label(frame.memory, frame.split)));
}

// Without a split: waste and memory side by side, per-layer bytes below across both. With
// one: the VRAM's and the RAM's memory side by side (read together), waste and per-layer
// bytes below.
void LivePanel::arrange_charts(bool split) {
  if (arranged_split_ == split) return;
  arranged_split_ = split;
  for (QWidget* w : {static_cast<QWidget*>(fragmentation_), static_cast<QWidget*>(memory_),
                     static_cast<QWidget*>(ram_memory_), static_cast<QWidget*>(layers_)}) {
    charts_->removeWidget(w);
  }
  ram_memory_->setVisible(split);
  if (split) {
    charts_->addWidget(memory_, 0, 0);
    charts_->addWidget(ram_memory_, 0, 1);
    charts_->addWidget(fragmentation_, 1, 0);
    charts_->addWidget(layers_, 1, 1);
  } else {
    charts_->addWidget(fragmentation_, 0, 0);
    charts_->addWidget(memory_, 0, 1);
    charts_->addWidget(layers_, 1, 0, 1, 2);
  }
}

}  // namespace kvscope::ui
