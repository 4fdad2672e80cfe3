// SliderSpin: a slider and a spin box that show one integer, kept in step: dragging
// the slider updates the box and typing in the box moves the slider. valueChanged() fires
// once per change, whichever side made it.
#pragma once

#include <QWidget>

class QSlider;
class QSpinBox;

namespace kvscope::ui {

class SliderSpin : public QWidget {
  Q_OBJECT

 public:
  SliderSpin(int minimum, int maximum, int value, QWidget* parent = nullptr);

  int value() const;
  void setValue(int value);  // clamped to the range
  void setRange(int minimum, int maximum);
  void setSuffix(const QString& suffix);
  void setSingleStep(int step);

  QSlider* slider() const { return slider_; }
  QSpinBox* spinBox() const { return spin_; }

 signals:
  void valueChanged(int value);

 private:
  QSlider* slider_;
  QSpinBox* spin_;
};

}  // namespace kvscope::ui
