// LivePanel: the right side of the window. A summary line, the block map and three charts
// (waste over time, memory by tokens, per-layer bytes and error), all fed from the
// worker's PanelFrames. Every frame is added to the history; drawing is merged: only the
// newest frame is drawn, from a single-shot timer, with one replace() per series.
#pragma once

#include <QTimer>
#include <QWidget>

#include <map>
#include <optional>

#include "panel/history.h"
#include "worker/engine_messages.h"

class QCheckBox;
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
  MemoryChart* memoryChart() const { return memory_; }
  LayerChart* layerChart() const { return layers_; }
  int framesDrawn() const { return frames_drawn_; }
  // Time spent updating the panel's widgets so far (painting happens later, in Qt).
  double updateSeconds() const { return static_cast<double>(update_ns_) / 1e9; }

 private:
  void draw_pending();
  void update_summary(const PanelFrame& frame);

  QLabel* summary_;
  QCheckBox* show_free_;
  BlockMapWidget* block_map_;
  FragmentationChart* fragmentation_;
  MemoryChart* memory_;
  LayerChart* layers_;
  PanelHistory history_;
  std::optional<PanelFrame> pending_;
  std::optional<PanelFrame> last_;
  QTimer draw_timer_;
  int frames_drawn_ = 0;
  qint64 update_ns_ = 0;
};

}  // namespace kvscope::ui
