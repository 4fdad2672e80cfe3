// How one KV block is drawn in every block map (the live panel's, and the paging and
// prefix demos'): a free block is an empty frame; a held block is a faint fill of its
// owner's colour with the filled part solid; a block more than one sequence holds is
// hatched over that.
#pragma once

#include <QColor>
#include <QRect>

class QPainter;
class QPalette;

namespace kvscope::ui {

// `c` with alpha `alpha` (0..1): the faint shades of a block map.
QColor faint(QColor c, double alpha);

struct BlockCell {
  QColor color;         // the owner's colour
  double fill = 1.0;    // filled fraction of the block's slots, 0..1
  bool shared = false;  // refcount > 1: hatched
};

struct BlockCellStyle {
  double faint_alpha = 0.3;                  // of the unfilled part
  Qt::Orientation fill_axis = Qt::Vertical;  // Vertical: the level rises from the bottom;
                                             // Horizontal: it grows from the left
};

// A free block: a frame in the palette's Mid on Base, or a solid Mid cell where `r` is too
// small for a frame to read.
void paint_free_cell(QPainter& p, const QRect& r, const QPalette& palette);

// A held block: faint fill, the filled part solid (at least one pixel, so a block holding
// one token shows), then the hatch when shared.
void paint_block_cell(QPainter& p, const QRect& r, const BlockCell& cell, const QPalette& palette,
                      const BlockCellStyle& style = {});

}  // namespace kvscope::ui
