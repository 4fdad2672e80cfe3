// The layer axis of a per-layer bar chart. The bars sit on a QBarCategoryAxis, which draws
// "..." for a label wider than its bar (SmolLM2's 30 layers print 0-9 and then dots), so its
// labels are hidden and a QCategoryAxis over the same range prints the layer numbers: every
// layer while they fit (20 or fewer), else every 5th (every 10th past 100).
#pragma once

#include <QtGlobal>

class QBarCategoryAxis;
class QCategoryAxis;

namespace kvscope::ui {

// The step between printed layer numbers for n_layers.
int layer_label_step(qsizetype n_layers);

// `bars` gets one (unprinted) category per layer; `labels` prints every step-th layer number
// under its bar (the range -0.5 .. n - 0.5 is the bar axis's).
void set_layer_axes(QBarCategoryAxis* bars, QCategoryAxis* labels, qsizetype n_layers);

}  // namespace kvscope::ui
