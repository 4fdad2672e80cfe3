// PagingDemoPage: paged vs contiguous KV allocation, without a model. A request trace (a
// preset from engine/sim) runs through the three policies of engine/sim (reserve-max,
// exact-fit, the engine's paged KvCacheManager); the page shows the memory of each policy
// side by side as an animated block map, utilisation over time, the waste split of the
// whole run, and its figures. Changing a setting re-runs the simulation (merged through a
// short single-shot timer while a slider moves); settings that could never serve a
// request (a context larger than the memory) are reported above the map.
#pragma once

#include <QString>
#include <QTimer>
#include <QWidget>

#include <optional>

#include "sim/scenarios/paging_playback.h"
#include "sim/simulation.h"

class QLabel;

namespace kvscope::ui {

class PagingBlockMap;
class PagingDemoControls;
class PagingSummaryTable;
class PagingUtilisationChart;
class PagingWasteBar;

class PagingDemoPage : public QWidget {
  Q_OBJECT

 public:
  explicit PagingDemoPage(QWidget* parent = nullptr);

  // The run on show; nullptr while the settings are invalid.
  const SimulationResult* result() const { return result_ ? &*result_ : nullptr; }
  // Why the settings are invalid (empty when they are fine).
  QString errorText() const;
  // Steps played: the block map shows the frame of currentStep() - 1.
  std::int64_t currentStep() const { return playback_.step(); }
  bool isPlaying() const { return play_timer_.isActive(); }

  // Runs the simulation for the current settings now, not after the merge timer.
  void rerunNow();
  void play();
  void pause();
  void stepOnce();
  void seek(std::int64_t step);

  PagingDemoControls* controls() const { return controls_; }
  PagingBlockMap* blockMap() const { return block_map_; }
  PagingUtilisationChart* utilisationChart() const { return chart_; }
  PagingWasteBar* wasteBar() const { return waste_; }
  PagingSummaryTable* summaryTable() const { return summary_; }

 protected:
  void changeEvent(QEvent* event) override;  // the error's red follows the theme

 private:
  void restyle_error();
  void tick();
  void show_position();
  void show_trace_info();
  void show_error(const QString& message);

  PagingDemoControls* controls_;
  QLabel* info_;
  QLabel* error_;
  PagingBlockMap* block_map_;
  PagingUtilisationChart* chart_;
  PagingWasteBar* waste_;
  PagingSummaryTable* summary_;
  QTimer rerun_timer_;
  QTimer play_timer_;
  std::optional<SimulationResult> result_;
  PagingPlayback playback_;
};

}  // namespace kvscope::ui
