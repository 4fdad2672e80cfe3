#include "widgets/slider_spin.h"

#include <QHBoxLayout>
#include <QSignalBlocker>
#include <QSlider>
#include <QSpinBox>

#include <algorithm>

namespace kvscope::ui {

SliderSpin::SliderSpin(int minimum, int maximum, int value, QWidget* parent)
    : QWidget(parent), slider_(new QSlider(Qt::Horizontal, this)), spin_(new QSpinBox(this)) {
  setRange(minimum, maximum);
  setValue(value);
  spin_->setGroupSeparatorShown(true);
  spin_->setAccelerated(true);
  spin_->setKeyboardTracking(false);  // typing "4096" is one change, not four
  auto* layout = new QHBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(slider_, 1);
  layout->addWidget(spin_);
  // The spin box owns the value; the slider follows it without echoing back.
  connect(slider_, &QSlider::valueChanged, spin_, &QSpinBox::setValue);
  connect(spin_, &QSpinBox::valueChanged, this, [this](int v) {
    const QSignalBlocker block(slider_);
    slider_->setValue(v);
    emit valueChanged(v);
  });
}

int SliderSpin::value() const {
  return spin_->value();
}

void SliderSpin::setValue(int value) {
  spin_->setValue(value);
}

void SliderSpin::setRange(int minimum, int maximum) {
  const QSignalBlocker block(slider_);
  slider_->setRange(minimum, maximum);
  slider_->setPageStep(std::max(1, (maximum - minimum) / 16));
  spin_->setRange(minimum, maximum);  // a clamped value is announced through the box
  slider_->setValue(spin_->value());
}

void SliderSpin::setSuffix(const QString& suffix) {
  spin_->setSuffix(suffix);
}

void SliderSpin::setSingleStep(int step) {
  spin_->setSingleStep(step);
}

}  // namespace kvscope::ui
