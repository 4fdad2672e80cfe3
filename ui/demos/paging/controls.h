// PagingDemoControls: the settings of the paged-vs-contiguous demo (trace preset, number
// of requests, seed, capacity, max context, block size as slider + spin box) and the
// playback (play / pause, one step, restart, speed, position). Choosing a preset loads
// its capacity, max context and request count. Every change of a setting emits one
// settingsChanged().
#pragma once

#include <QWidget>

#include <cstdint>
#include <string>

class QComboBox;
class QLabel;
class QSlider;
class QSpinBox;
class QToolButton;

namespace kvscope::ui {

class SliderSpin;

struct PagingSettings {
  std::string preset;
  std::int64_t requests = 0;
  std::int64_t seed = 0;
  std::int64_t capacity = 0;
  std::int64_t max_context = 0;
  std::int64_t block_size = 0;
};

class PagingDemoControls : public QWidget {
  Q_OBJECT

 public:
  explicit PagingDemoControls(QWidget* parent = nullptr);

  PagingSettings settings() const;
  // Steps played per animation tick.
  int stepsPerTick() const;
  // Shows the playback position without emitting seekRequested.
  void setPosition(std::int64_t step, std::int64_t last);
  // Shows the play button as playing or paused without emitting playToggled.
  void setPlaying(bool playing);

  QComboBox* traceBox() const { return trace_; }
  QSpinBox* requestsSpin() const { return requests_; }
  QSpinBox* seedSpin() const { return seed_; }
  QSpinBox* capacitySpin() const { return capacity_; }
  QSpinBox* maxContextSpin() const { return max_context_; }
  QSlider* blockSizeSlider() const;
  QSpinBox* blockSizeSpin() const;
  QToolButton* playButton() const { return play_; }
  QToolButton* stepButton() const { return step_; }
  QToolButton* restartButton() const { return restart_; }
  QComboBox* speedBox() const { return speed_; }
  QSlider* positionSlider() const { return position_; }
  QLabel* positionLabel() const { return position_label_; }

 signals:
  void settingsChanged();
  void playToggled(bool playing);
  void stepRequested();
  void restartRequested();
  void seekRequested(qint64 step);

 private:
  QWidget* build_settings_row();
  QWidget* build_playback_row();
  void apply_preset(int index);

  QComboBox* trace_;
  QSpinBox* requests_;
  QSpinBox* seed_;
  QSpinBox* capacity_;
  QSpinBox* max_context_;
  SliderSpin* block_size_;
  QToolButton* play_;
  QToolButton* step_;
  QToolButton* restart_;
  QComboBox* speed_;
  QSlider* position_;
  QLabel* position_label_;
  bool loading_preset_ = false;
};

}  // namespace kvscope::ui
