// The app's widget style: Fusion (the same look on every desktop), with one change for
// the dark palette. Fusion outlines check boxes and radio buttons with the window colour
// darkened, which on a dark window is nearly black on nearly black: the box of an
// unchecked option disappears. In the dark palette they get a light outline instead.
#pragma once

#include <QProxyStyle>

namespace kvscope::ui {

class AppStyle : public QProxyStyle {
 public:
  AppStyle();
  void drawPrimitive(PrimitiveElement element, const QStyleOption* option, QPainter* painter,
                     const QWidget* widget = nullptr) const override;
};

}  // namespace kvscope::ui
