#include "widgets/chart_legend.h"

namespace kvscope::ui {

ChartLegend::ChartLegend(QWidget* parent) : QLabel(parent) {
  setWordWrap(true);
  setTextFormat(Qt::RichText);
  setAlignment(Qt::AlignHCenter | Qt::AlignTop);
  QFont small = font();
  small.setPointSizeF(small.pointSizeF() * 0.85);
  setFont(small);
}

void ChartLegend::setEntries(const QVector<LegendEntry>& entries) {
  QStringList parts;
  for (const LegendEntry& e : entries) {
    // Non-breaking inside an entry, breakable between entries.
    parts << QStringLiteral(
                 "<span style='white-space:nowrap'><span style='color:%1'>%2</span>"
                 "&nbsp;%3</span>")
                 .arg(e.color.name(), e.line ? QStringLiteral("\u2501") : QStringLiteral("\u25a0"),
                      e.text.toHtmlEscaped().replace(QLatin1Char(' '), QStringLiteral("&nbsp;")));
  }
  const QString html = parts.join(QStringLiteral(" &nbsp; "));
  if (html != text()) setText(html);
}

}  // namespace kvscope::ui
