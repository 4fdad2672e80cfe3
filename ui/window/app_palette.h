// The app's light and dark palettes (Fusion style), so the GUI looks the same on every
// desktop and both can be checked under Xvfb.
#pragma once

#include <QPalette>

namespace kvscope::ui {

QPalette light_palette();
QPalette dark_palette();
// Whether `palette` has a dark window (text lighter than the window).
bool is_dark(const QPalette& palette);
// Red for text that says something failed, readable on `palette`'s window and base (over 4.5:1
// in both themes; Qt::darkRed was 1.5:1 on the dark base).
QColor error_text_color(const QPalette& palette);

}  // namespace kvscope::ui
