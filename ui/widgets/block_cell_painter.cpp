#include "widgets/block_cell_painter.h"

#include <QPainter>
#include <QPalette>

#include <algorithm>

namespace kvscope::ui {
namespace {

constexpr int kMinFramedCell = 5;  // narrower cells are drawn solid

}  // namespace

QColor faint(QColor c, double alpha) {
  c.setAlphaF(static_cast<float>(alpha));
  return c;
}

void paint_free_cell(QPainter& p, const QRect& r, const QPalette& palette) {
  const QColor frame = palette.color(QPalette::Mid);
  const bool framed = r.width() >= kMinFramedCell;
  p.setPen(framed ? QPen(frame, 1) : Qt::NoPen);
  p.setBrush(framed ? palette.color(QPalette::Base) : frame);
  p.drawRect(r.adjusted(0, 0, -1, -1));
}

void paint_block_cell(QPainter& p, const QRect& r, const BlockCell& cell, const QPalette& palette,
                      const BlockCellStyle& style) {
  p.fillRect(r, faint(cell.color, style.faint_alpha));
  if (style.fill_axis == Qt::Vertical) {
    const int level = std::clamp(static_cast<int>(r.height() * cell.fill + 0.5), 1, r.height());
    p.fillRect(QRect(r.left(), r.bottom() - level + 1, r.width(), level), cell.color);
  } else {
    const int level = std::clamp(static_cast<int>(r.width() * cell.fill + 0.5), 1, r.width());
    p.fillRect(QRect(r.left(), r.top(), level, r.height()), cell.color);
  }
  if (cell.shared) p.fillRect(r, QBrush(palette.color(QPalette::Base), Qt::BDiagPattern));
}

}  // namespace kvscope::ui
