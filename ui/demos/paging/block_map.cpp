#include "demos/paging/block_map.h"

#include <QPainter>

#include <algorithm>
#include <array>

#include "widgets/block_cell_painter.h"
#include "widgets/hover_tooltip.h"

namespace kvscope::ui {
namespace {

constexpr int kMargin = 6;
constexpr int kColumnGap = 18;
constexpr int kMaxCell = 28;
constexpr int kMinCell = 3;

QColor external_color() {
  return QColor(0xd6, 0x27, 0x28);
}

QFont small_font(const QFont& base) {
  QFont f = base;
  f.setPointSizeF(base.pointSizeF() * 0.88);
  return f;
}

// Which slots of a span are in which state.
struct SpanParts {
  std::int64_t stored_end, needed_end, end;
};

SpanParts parts(const SimSpan& s) {
  return {s.start + s.stored, s.start + s.needed, s.start + s.size};
}

}  // namespace

QColor PagingBlockMap::ownerColor(std::int64_t request) {
  static constexpr std::array<QRgb, 8> kColors = {0x4e79a7, 0xf28e2b, 0x76b7b2, 0x59a14f,
                                                  0xedc948, 0xb07aa1, 0x9c755f, 0xa0cbe8};
  const auto n = static_cast<std::int64_t>(kColors.size());
  return QColor(kColors[static_cast<std::size_t>(((request % n) + n) % n)]);
}

PagingBlockMap::PagingBlockMap(QWidget* parent) : QWidget(parent) {
  setMouseTracking(true);
  setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
}

void PagingBlockMap::setColumns(std::vector<PagingMapColumn> columns) {
  columns_ = std::move(columns);
  relayout();
  update();
}

void PagingBlockMap::setPlaceholder(const QString& text) {
  placeholder_ = text;
  update();
}

void PagingBlockMap::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  relayout();
}

QRect PagingBlockMap::column_rect(std::size_t i) const {
  const int n = std::max<int>(1, static_cast<int>(columns_.size()));
  const int w = (width() - 2 * kMargin - (n - 1) * kColumnGap) / n;
  return QRect(kMargin + static_cast<int>(i) * (w + kColumnGap), kMargin, std::max(1, w),
               std::max(1, legend_.top() - 2 * kMargin));
}

QRect PagingBlockMap::raster_rect(std::size_t i) const {
  const QRect col = column_rect(i);
  const std::int64_t capacity = columns_[i].map.capacity;
  const auto rows = static_cast<int>((capacity + raster_.row_slots - 1) / raster_.row_slots);
  return QRect(col.left(), col.top() + raster_.header, raster_.width, rows * raster_.row_h);
}

// The largest square cell at which every block (every slot for contiguous-only maps) of
// the capacity gets one cell; when even the smallest does not fit, thin rows of
// continuous slots that fill the height.
void PagingBlockMap::relayout() {
  const int line = fontMetrics().height();
  const int small = QFontMetrics(small_font(font())).height();
  legend_ = QRect(kMargin, height() - kMargin - line, width() - 2 * kMargin, line);
  raster_ = {};
  raster_.header = line + 2 * small + 8;
  if (columns_.empty()) return;
  std::int64_t unit = 1, capacity = 1;
  for (const PagingMapColumn& c : columns_) {
    unit = std::max(unit, c.map.unit);
    capacity = std::max(capacity, c.map.capacity);
  }
  const int avail_w = column_rect(0).width();
  const int avail_h = std::max(1, column_rect(0).height() - raster_.header);
  const std::int64_t n_cells = (capacity + unit - 1) / unit;
  for (int s = kMaxCell; s >= kMinCell; --s) {
    const std::int64_t cols = std::max(1, avail_w / s);
    if ((n_cells + cols - 1) / cols * s <= avail_h) {
      raster_.row_h = s;
      raster_.width = static_cast<int>(cols) * s;
      raster_.row_slots = cols * unit;
      raster_.cell = s;
      raster_.cell_slots = unit;
      return;
    }
  }
  raster_.row_h = kMinCell;
  raster_.width = avail_w;
  const std::int64_t rows = std::max(1, avail_h / kMinCell);
  const std::int64_t per_row = (capacity + rows - 1) / rows;
  raster_.row_slots = (per_row + unit - 1) / unit * unit;
}

QRectF PagingBlockMap::slot_rect(const QRect& area, std::int64_t row, std::int64_t a,
                                 std::int64_t b) const {
  const double px = static_cast<double>(raster_.width) / static_cast<double>(raster_.row_slots);
  const double x = area.left() + static_cast<double>(a - row * raster_.row_slots) * px;
  const int h = raster_.row_h >= 4 ? raster_.row_h - 1 : raster_.row_h;
  return QRectF(x, area.top() + static_cast<double>(row) * raster_.row_h,
                static_cast<double>(b - a) * px, h);
}

// Fills slots [a, b), wrapping from row to row.
void PagingBlockMap::fill_run(QPainter& p, const QRect& area, std::int64_t a, std::int64_t b,
                              const QBrush& brush) const {
  while (a < b) {
    const std::int64_t row = a / raster_.row_slots;
    const std::int64_t end = std::min(b, (row + 1) * raster_.row_slots);
    p.fillRect(slot_rect(area, row, a, end), brush);
    a = end;
  }
}

void PagingBlockMap::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.fillRect(rect(), palette().color(QPalette::Window));
  if (columns_.empty()) {
    p.setPen(palette().color(QPalette::PlaceholderText));
    p.drawText(rect(), Qt::AlignCenter | Qt::TextWordWrap, placeholder_);
    return;
  }
  for (std::size_t i = 0; i < columns_.size(); ++i) paint_column(p, i);
  paint_legend(p);
}

void PagingBlockMap::paint_column(QPainter& p, std::size_t i) const {
  const PagingMapColumn& c = columns_[i];
  const QRect col = column_rect(i);
  QFont bold = font();
  bold.setBold(true);
  const QFont small = small_font(font());
  const int line = QFontMetrics(bold).height();
  const int small_line = QFontMetrics(small).height();
  p.setPen(palette().color(QPalette::WindowText));
  p.setFont(bold);
  QRect r(col.left(), col.top(), col.width(), line);
  p.drawText(r, Qt::AlignLeft | Qt::AlignVCenter,
             QFontMetrics(bold).elidedText(c.title, Qt::ElideRight, r.width()));
  p.setFont(small);
  for (const QString& text : {c.status, c.figures}) {
    r = QRect(col.left(), r.bottom() + 2, col.width(), small_line);
    p.drawText(r, Qt::AlignLeft | Qt::AlignVCenter,
               QFontMetrics(small).elidedText(text, Qt::ElideRight, r.width()));
  }
  p.setFont(font());

  const QRect area = raster_rect(i);
  const SimBlockMap& map = c.map;
  fill_run(p, area, 0, map.capacity, palette().color(QPalette::Base));
  const QColor red = external_color();
  for (const SimHole& h : sim_holes(map)) {
    if (!h.external) continue;
    fill_run(p, area, h.start, h.start + h.size, faint(red, 0.18));
    fill_run(p, area, h.start, h.start + h.size, QBrush(red, Qt::DiagCrossPattern));
  }
  paint_spans(p, area, map);
  paint_cell_lines(p, area, map);
  p.setPen(QPen(palette().color(QPalette::Mid), 1));
  p.setBrush(Qt::NoBrush);
  p.drawRect(area.adjusted(-1, -1, 0, 0));
}

// Full spans of one owner that follow each other are painted as one run (with one-slot
// blocks a map can hold tens of thousands of spans).
void PagingBlockMap::paint_spans(QPainter& p, const QRect& area, const SimBlockMap& map) const {
  const auto full = [](const SimSpan& s) { return s.stored == s.size; };
  for (std::size_t i = 0; i < map.spans.size();) {
    const SimSpan& s = map.spans[i];
    const QColor color = ownerColor(s.owner);
    std::size_t j = i + 1;
    std::int64_t end = s.start + s.size;
    while (full(s) && j < map.spans.size() && map.spans[j].owner == s.owner &&
           map.spans[j].start == end && full(map.spans[j])) {
      end += map.spans[j++].size;
    }
    if (j > i + 1) {
      fill_run(p, area, s.start, end, color);
    } else {
      const SpanParts sp = parts(s);
      fill_run(p, area, s.start, sp.stored_end, color);
      fill_run(p, area, sp.stored_end, sp.needed_end, faint(color, 0.38));
      fill_run(p, area, sp.needed_end, sp.end, faint(color, 0.12));
      fill_run(p, area, sp.needed_end, sp.end, QBrush(color.darker(115), Qt::BDiagPattern));
    }
    i = j;
  }
}

// Paged: a gap after every cell, so blocks read as blocks. Contiguous: a line where each
// reservation starts, so neighbours read as two.
void PagingBlockMap::paint_cell_lines(QPainter& p, const QRect& area,
                                      const SimBlockMap& map) const {
  const QColor gap = palette().color(QPalette::Window);
  const int h = raster_.row_h - 1;
  if (map.paged) {
    if (raster_.cell_slots != map.unit || raster_.cell < 5) return;
    for (int c = 1; c * raster_.cell <= raster_.width; ++c) {
      p.fillRect(QRect(area.left() + c * raster_.cell - 1, area.top(), 1, area.height()), gap);
    }
    return;
  }
  if (raster_.row_h < 4) return;
  for (const SimSpan& s : map.spans) {
    const std::int64_t row = s.start / raster_.row_slots;
    const QRectF at = slot_rect(area, row, s.start, s.start);
    p.fillRect(QRectF(at.left(), at.top(), 1.0, h), gap);
  }
}

void PagingBlockMap::paint_legend(QPainter& p) const {
  const QColor sample = ownerColor(0);
  const QColor red = external_color();
  struct Entry {
    QString text;
    QBrush under, over;
  };
  const std::vector<Entry> entries = {
      {tr("stored token"), QBrush(sample), Qt::NoBrush},
      {tr("reserved for tokens to come"), QBrush(faint(sample, 0.38)), Qt::NoBrush},
      {tr("internal waste (never filled)"), QBrush(faint(sample, 0.12)),
       QBrush(sample.darker(115), Qt::BDiagPattern)},
      {tr("external: hole too small for the waiting request"), QBrush(faint(red, 0.18)),
       QBrush(red, Qt::DiagCrossPattern)},
      {tr("free"), QBrush(palette().color(QPalette::Base)), Qt::NoBrush},
  };
  int x = legend_.left();
  const int box = std::min(12, legend_.height() - 2);
  for (const Entry& e : entries) {
    const int text_w = fontMetrics().horizontalAdvance(e.text);
    if (x + box + 4 + text_w > legend_.right()) break;
    const QRect b(x, legend_.center().y() - box / 2, box, box);
    p.fillRect(b, e.under);
    if (e.over.style() != Qt::NoBrush) p.fillRect(b, e.over);
    p.setPen(QPen(palette().color(QPalette::Mid), 1));
    p.setBrush(Qt::NoBrush);
    p.drawRect(b.adjusted(0, 0, -1, -1));
    p.setPen(palette().color(QPalette::WindowText));
    p.drawText(QRect(x + box + 4, legend_.top(), text_w + 1, legend_.height()),
               Qt::AlignLeft | Qt::AlignVCenter, e.text);
    x += box + 4 + text_w + 16;
  }
  const QString scale = raster_.cell_slots == 1  ? tr("one cell = 1 slot")
                        : raster_.cell_slots > 1 ? tr("one cell = %1 slots").arg(raster_.cell_slots)
                                                 : tr("one row = %1 slots").arg(raster_.row_slots);
  if (x + fontMetrics().horizontalAdvance(scale) <= legend_.right()) {
    p.setPen(palette().color(QPalette::PlaceholderText));
    p.drawText(legend_, Qt::AlignRight | Qt::AlignVCenter, scale);
  }
}

QString PagingBlockMap::describeAt(QPoint pos) const {
  for (std::size_t i = 0; i < columns_.size(); ++i) {
    const QRect area = raster_rect(i);
    if (!area.contains(pos)) continue;
    const std::int64_t row = (pos.y() - area.top()) / raster_.cell;
    const std::int64_t slot =
        row * raster_.row_slots + (pos.x() - area.left()) * raster_.cell_slots / raster_.cell;
    if (slot >= columns_[i].map.capacity) return {};
    return describe_slot(columns_[i].map, slot);
  }
  return {};
}

QString PagingBlockMap::describe_slot(const SimBlockMap& map, std::int64_t slot) const {
  for (const SimSpan& s : map.spans) {
    if (slot < s.start || slot >= s.start + s.size) continue;
    const QString where =
        map.paged ? tr("block %1, slots %2\u2013%3")
                        .arg(s.start / map.unit)
                        .arg(s.start)
                        .arg(s.start + s.size - 1)
                  : tr("slots %1\u2013%2 (%3)").arg(s.start).arg(s.start + s.size - 1).arg(s.size);
    return tr("request %1 \u00b7 %2\n%3 stored, %4 reserved, %5 internal waste")
        .arg(s.owner)
        .arg(where)
        .arg(s.stored)
        .arg(s.needed - s.stored)
        .arg(s.size - s.needed);
  }
  for (const SimHole& h : sim_holes(map)) {
    if (slot < h.start || slot >= h.start + h.size) continue;
    QString text =
        tr("free slots %1\u2013%2 (%3)").arg(h.start).arg(h.start + h.size - 1).arg(h.size);
    if (h.external && slot >= map.usable) {
      text += tr("\nexternal: no block covers these slots");
    } else if (h.external) {
      text += tr("\nexternal: the waiting request needs %1 contiguous slots").arg(map.head_need);
    }
    return text;
  }
  return {};
}

bool PagingBlockMap::event(QEvent* event) {
  if (handle_hover_tooltip(this, event, [this](const QPoint& p) { return describeAt(p); })) {
    return true;
  }
  return QWidget::event(event);
}

}  // namespace kvscope::ui
