// A combo box whose closed face shortens a text too wide for it with an ellipsis; hovering
// it shows the whole text (above the box's own tooltip). Fusion draws the current text
// clipped at the arrow, so in the fixed-width columns of What fits and the demos
// "Loaded: SmolLM2-135M-Instruct.Q4_1" read "Loaded: SmolLM2-135M-Instruct." and
// "92.1 MiB" read "92.1 MiE".
#pragma once

#include <QComboBox>

namespace kvscope::ui {

class ElidingComboBox : public QComboBox {
  Q_OBJECT

 public:
  explicit ElidingComboBox(QWidget* parent = nullptr);

  // The text the closed box draws: the current text, elided at its end to the edit field.
  QString shownText() const;
  // What hovering the box shows: the whole text when it is shortened, then the tooltip.
  QString hoverText() const;

 protected:
  void paintEvent(QPaintEvent* event) override;
  bool event(QEvent* event) override;
};

}  // namespace kvscope::ui
