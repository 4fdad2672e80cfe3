// LivePanel: the right side of the window. A summary line, the block map and three charts
// (waste over time, memory by tokens, per-layer bytes and error), all fed from the
// worker's PanelFrames. A model split between GPU and CPU gets a fourth: memory by tokens
// for the VRAM and for the RAM, side by side above waste and per-layer bytes. Every frame is added
// to the history; drawing is merged: only the newest frame is drawn, from a single-shot timer, with
// one replace() per series.
#pragma once

#include <QTimer>
#include <QWidget>

#include <map>
#include <optional>

#include "panel/history.h"
#include "worker/engine_messages.h"

class QCheckBox;
class QGridLayout;
class QLabel;

namespace kvscope::ui {

class BlockMapWidget;
class FragmentationChart;
class LayerChart;
class MemoryChart;

class LivePanel : public QWidget {
  Q_OBJECT

 public:
  explicit LivePanel(QWidget* parent = nullptr);

  void setFrame(const PanelFrame& frame);
  void setChatNames(std::map<ChatId, QString> names);
  // Draws a frame waiting for the merge timer now (screenshots).
  void drawNow() { draw_pending(); }
  // Forgets the history (a new model was loaded).
  void reset();

  const PanelHistory& history() const { return history_; }
  // The frame drawn last (none before the first).
  const std::optional<PanelFrame>& lastFrame() const { return last_; }
  BlockMapWidget* blockMap() const { return block_map_; }
  FragmentationChart* fragmentationChart() const { return fragmentation_; }
  // The device's memory (a split's VRAM), and a split's RAM (hidden without a split).
  MemoryChart* memoryChart() const { return memory_; }
  MemoryChart* ramMemoryChart() const { return ram_memory_; }
  LayerChart* layerChart() const { return layers_; }
  int framesDrawn() const { return frames_drawn_; }
  // Time spent updating the panel's widgets so far (painting happens later, in Qt).
  double updateSeconds() const { return static_cast<double>(update_ns_) / 1e9; }

 private:
  void draw_pending();
  void update_summary(const PanelFrame& frame);
  void arrange_charts(bool split);

  QLabel* summary_;
  QCheckBox* show_free_;
  BlockMapWidget* block_map_;
  FragmentationChart* fragmentation_;
  MemoryChart* memory_;
  MemoryChart* ram_memory_;
  LayerChart* layers_;
  QGridLayout* charts_;
  std::optional<bool> arranged_split_;  // the arrangement the grid has
  PanelHistory history_;
  std::optional<PanelFrame> pending_;
  std::optional<PanelFrame> last_;
  QTimer draw_timer_;
  int frames_drawn_ = 0;
  qint64 update_ns_ = 0;
};

}  // namespace kvscope::ui
