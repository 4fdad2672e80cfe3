// Colours and fonts of the panel's charts, taken from the widget palette so they read in
// light and dark themes, and kept small so four charts fit beside the chat at 1280x800.
#pragma once

#include <QColor>
#include <QPalette>

class QChart;
class QChartView;
class QAbstractAxis;

namespace kvscope::ui {

// Background, title, legend and axes of `chart` from `palette`; compact margins.
void style_chart(QChart* chart, const QPalette& palette);
// Label, line and grid colours of one axis.
void style_axis(QAbstractAxis* axis, const QPalette& palette);
// A chart view set up for the panel (antialiased, no frame).
void setup_chart_view(QChartView* view);

// Series colours (mid tones, readable on both palettes).
QColor series_color(int index);

}  // namespace kvscope::ui
