#include "widgets/chart_legend.h"

namespace kvscope::ui {
namespace {

// white-space:nowrap keeps Latin words together, but Qt still breaks Chinese text between
// any two characters ("工作" / "区"): a word joiner (U+2060, invisible) next to each CJK
// character keeps the entry on one line. Latin text is left as it is.
QString keep_together(const QString& text) {
  const auto cjk = [](QChar c) { return c.unicode() >= 0x2E80; };
  QString out;
  out.reserve(text.size() * 2);
  for (qsizetype i = 0; i < text.size(); ++i) {
    if (i > 0 && (cjk(text[i - 1]) || cjk(text[i]))) out += QChar(0x2060);
    out += text[i];
  }
  return out;
}

}  // namespace

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
                      keep_together(e.text.toHtmlEscaped())
                          .replace(QLatin1Char(' '), QStringLiteral("&nbsp;")));
  }
  const QString html = parts.join(QStringLiteral(" &nbsp; "));
  if (html != text()) setText(html);
}

}  // namespace kvscope::ui
