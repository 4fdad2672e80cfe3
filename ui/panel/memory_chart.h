// MemoryChart: where the device's memory goes as the context grows (x = tokens in the
// cache): weights, KV in use, KV pool free, workspace, used by others and free, stacked.
// The legend carries the latest value of each part. "Free" is drawn only on request, so
// that a small model on a big device stays readable; its value is always in the legend.
// A model split between GPU and CPU has two: the VRAM's (the device side) and the RAM's,
// each titled with the layers and parts of the model it holds (panel/split_sides.h).
#pragma once

#include <QStringList>

#include <array>

#include "panel/history.h"
#include "widgets/chart_frame.h"

class QAreaSeries;
class QLineSeries;
class QValueAxis;

namespace kvscope::ui {

class MemoryChart : public ChartFrame {
  Q_OBJECT

 public:
  explicit MemoryChart(MemorySide side = kDeviceMemory, QWidget* parent = nullptr);

  // One replace() per series.
  void update(const PanelHistory& history);
  void setShowFree(bool show);

  QLineSeries* upperSeries(int part) const { return upper_[static_cast<std::size_t>(part)]; }
  MemorySide side() const { return side_; }
  // The title as plain text (drawn on two lines when one is too narrow for it).
  QString title() const { return title_; }
  // The legend's texts, one per part ("weights 9.6 MiB", ..., "free 2.1 GiB (not drawn)").
  QStringList legendTexts() const { return legend_texts_; }

 protected:
  void restyle() override;
  void resizeEvent(QResizeEvent* event) override;

 private:
  void update_title(const PanelHistory& history);
  void fit_title();
  void update_legend(const PanelHistory& history);

  MemorySide side_;
  QString title_;

  std::array<QLineSeries*, kMemoryParts> upper_{};
  std::array<QAreaSeries*, kMemoryParts> areas_{};
  QValueAxis* x_;
  QValueAxis* y_;
  bool show_free_ = false;
  QStringList legend_texts_;
};

}  // namespace kvscope::ui
