#include "window/app_style.h"

#include <QPainter>
#include <QStyleFactory>
#include <QStyleOption>

#include "window/app_palette.h"

namespace kvscope::ui {

AppStyle::AppStyle() : QProxyStyle(QStyleFactory::create(QStringLiteral("Fusion"))) {}

void AppStyle::drawPrimitive(PrimitiveElement element, const QStyleOption* option,
                             QPainter* painter, const QWidget* widget) const {
  QProxyStyle::drawPrimitive(element, option, painter, widget);
  const bool box = element == PE_IndicatorCheckBox;
  if ((!box && element != PE_IndicatorRadioButton) || !is_dark(option->palette)) return;
  painter->save();
  painter->setRenderHint(QPainter::Antialiasing, true);
  const bool enabled = option->state & State_Enabled;
  painter->setPen(
      QPen(option->palette.color(enabled ? QPalette::Active : QPalette::Disabled, QPalette::Mid)
               .lighter(enabled ? 150 : 110),
           1.0));
  painter->setBrush(Qt::NoBrush);
  const QRectF r = QRectF(option->rect).adjusted(0.5, 0.5, -0.5, -0.5);
  if (box) {
    painter->drawRoundedRect(r, 2.0, 2.0);
  } else {
    painter->drawEllipse(r);
  }
  painter->restore();
}

}  // namespace kvscope::ui
