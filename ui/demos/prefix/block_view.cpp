#include "demos/prefix/block_view.h"

#include <QPainter>
#include <QPainterPath>

#include <algorithm>

#include "chat/colors.h"
#include "kv/kv_cache_observer.h"
#include "sim/scenarios/prefix_sharing_scenario.h"
#include "widgets/block_cell_painter.h"
#include "widgets/chart_style.h"
#include "widgets/hover_tooltip.h"

namespace kvscope::ui {
namespace {

constexpr int kMargin = 6;
constexpr int kMaxCellW = 160;
constexpr int kMaxRowH = 56;
constexpr int kMinPoolCell = 2;
constexpr int kMaxPoolCell = 26;

}  // namespace

PrefixBlockView::PrefixBlockView(QWidget* parent) : QWidget(parent) {
  setMouseTracking(true);
  setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
}

void PrefixBlockView::setScenario(const PrefixSharingScenario& s) {
  const PrefixSharingParams& p = s.params();
  const KvCacheManager& m = s.shared();
  block_size_ = p.block_size;
  prompt_tokens_ = p.prompt_tokens;
  columns_ = (p.prompt_tokens + p.generated_tokens + p.block_size - 1) / p.block_size;
  rows_.clear();
  for (const SeqId seq : m.sequence_ids()) {
    const BlockTable& t = m.block_table(seq, 0);
    std::vector<Cell>& row = rows_.emplace_back();
    for (std::int64_t i = 0; i < t.n_blocks(); ++i) {
      const BlockId id = t.block(i);
      row.push_back({id, m.pool(0).refcount(id), static_cast<std::int32_t>(t.filled(i)),
                     s.copied_blocks().contains(id), static_cast<int>(seq)});
    }
  }
  pool_.clear();
  // The snapshot is a value: kept alive here, as the loop reads into it.
  const CacheSnapshot snapshot = snapshot_of(m);
  for (const BlockInfo& b : snapshot.groups.at(0).blocks) {
    pool_.push_back({b.id, b.refcount, b.filled_slots, s.copied_blocks().contains(b.id),
                     static_cast<int>(b.owner)});
  }
  used_blocks_ = m.usage().n_used;
  separate_blocks_ = s.separate().usage().n_used;
  update();
}

// From the top: prompt / generated header, one row per sample, the pool caption and its
// cells (wrapped), the two bars, the legend. Rows take what the rest leaves.
PrefixBlockView::Geometry PrefixBlockView::geometry() const {
  Geometry g;
  const int line = fontMetrics().height();
  g.label_w = fontMetrics().horizontalAdvance(tr("sample %1").arg(16)) + 10;
  const int full_w = width() - 2 * kMargin;
  const auto n_pool = static_cast<int>(std::max<std::size_t>(1, pool_.size()));
  // The largest cells whose wrapped rows fit in a quarter of the height.
  g.pool_cell = kMinPoolCell;
  for (int c = kMaxPoolCell; c > kMinPoolCell; --c) {
    const int cols = std::max(1, full_w / c);
    if (((n_pool + cols - 1) / cols) * c <= height() / 4) {
      g.pool_cell = c;
      break;
    }
  }
  g.pool_cols = std::max(1, full_w / g.pool_cell);
  const int pool_h = line + 4 + ((n_pool + g.pool_cols - 1) / g.pool_cols) * g.pool_cell;
  const int bars_h = 2 * (line + 6);
  const int n_rows = std::max<int>(1, static_cast<int>(rows_.size()));
  const int top = kMargin + line + 6;  // below the prompt / generated header
  const int avail_h = height() - top - pool_h - bars_h - 2 * line - 6 * kMargin;
  const int avail_w = full_w - g.label_w;
  g.row_h = std::clamp(avail_h / n_rows, 4, kMaxRowH);
  g.cell_w =
      std::clamp(static_cast<int>(avail_w / std::max<std::int64_t>(1, columns_)), 1, kMaxCellW);
  g.grid = QRect(kMargin + g.label_w, top, g.cell_w * static_cast<int>(columns_), g.row_h * n_rows);
  g.pool_caption = QRect(kMargin, g.grid.bottom() + 2 * kMargin, full_w, line);
  g.pool_origin = QPoint(kMargin, g.pool_caption.bottom() + 4);
  g.bars = QRect(kMargin, g.pool_origin.y() + pool_h - line - 4 + 2 * kMargin, full_w, bars_h);
  g.legend = QRect(kMargin, g.bars.bottom() + kMargin, full_w, 2 * line + 4);  // may wrap
  return g;
}

QRect PrefixBlockView::pool_cell_in(const Geometry& g, int block) {
  return {g.pool_origin.x() + (block % g.pool_cols) * g.pool_cell,
          g.pool_origin.y() + (block / g.pool_cols) * g.pool_cell, g.pool_cell, g.pool_cell};
}

QColor PrefixBlockView::shared_color() const {
  return series_color(5);
}

void PrefixBlockView::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.fillRect(rect(), palette().color(QPalette::Base));
  if (rows_.empty()) {
    p.setPen(palette().color(QPalette::PlaceholderText));
    p.drawText(rect().adjusted(kMargin, kMargin, -kMargin, -kMargin),
               Qt::AlignCenter | Qt::TextWordWrap,
               tr("Press Step or Play: the prompt is prefilled once, then forked into the "
                  "samples."));
    return;
  }
  const Geometry g = geometry();
  paint_header(p, g);
  for (std::size_t s = 0; s < rows_.size(); ++s) {
    const int y = g.grid.top() + static_cast<int>(s) * g.row_h;
    p.setPen(palette().color(QPalette::Text));
    p.drawText(QRect(kMargin, y, g.label_w - 6, g.row_h), Qt::AlignRight | Qt::AlignVCenter,
               tr("sample %1").arg(s));
    const int gap = g.cell_w >= 6 && g.row_h >= 6 ? 1 : 0;
    for (std::int64_t i = 0; i < columns_; ++i) {  // blocks not held yet: empty frames
      const QRect cell = cell_in(g, static_cast<int>(s), static_cast<int>(i));
      const auto at = static_cast<std::size_t>(i);
      paint_cell(p, cell.adjusted(gap, gap, -gap, -gap),
                 at < rows_[s].size() ? rows_[s][at] : Cell{}, static_cast<int>(s));
    }
  }
  paint_pool(p, g);
  paint_bars(p, g);
  paint_legend(p, g.legend);
}

// "prompt (40 tokens) | generated" above the grid, split where the prompt ends.
void PrefixBlockView::paint_header(QPainter& p, const Geometry& g) const {
  const double per_token = static_cast<double>(g.cell_w) / static_cast<double>(block_size_);
  const int x = g.grid.left() + static_cast<int>(per_token * static_cast<double>(prompt_tokens_));
  const int line = fontMetrics().height();
  const QRect header(g.grid.left(), kMargin, g.grid.width(), line);
  p.setPen(palette().color(QPalette::Text));
  const QString prompt = tr("prompt: %1 tokens").arg(prompt_tokens_);
  const QString gen = tr("generated \u2192");
  const QRect left(kMargin, header.top(), std::max(0, x - kMargin - 4), line);
  p.drawText(left, Qt::AlignRight | Qt::AlignVCenter,
             fontMetrics().elidedText(prompt, Qt::ElideLeft, left.width()));
  p.drawText(QRect(x + 4, header.top(), std::max(0, width() - x - 4 - kMargin), line),
             Qt::AlignLeft | Qt::AlignVCenter, gen);
  p.setPen(QPen(palette().color(QPalette::Text), 1, Qt::DashLine));
  p.drawLine(x, header.top(), x, g.grid.bottom() + 2);
}

void PrefixBlockView::paint_cell(QPainter& p, const QRect& r, const Cell& c, int sample) const {
  if (c.refcount == 0) {  // free, or not held yet
    paint_free_cell(p, r, palette());
    return;
  }
  const bool shared = c.refcount > 1;
  const double fill = static_cast<double>(c.filled) / static_cast<double>(block_size_);
  // A sample's blocks run along its row, so the fill grows from the left with its tokens.
  paint_block_cell(p, r, {shared ? shared_color() : chat_color(sample + 1), fill, shared},
                   palette(), {.faint_alpha = 0.25, .fill_axis = Qt::Horizontal});
  if (shared) {
    const QString n = QStringLiteral("\u00d7%1").arg(c.refcount);
    if (r.width() >= fontMetrics().horizontalAdvance(n) + 4 &&
        r.height() >= fontMetrics().height()) {
      QFont bold = font();
      bold.setBold(true);
      p.setFont(bold);
      const QRect pill =
          QFontMetrics(bold).boundingRect(r, Qt::AlignCenter, n).adjusted(-2, 0, 2, 0);
      p.fillRect(pill.intersected(r), palette().color(QPalette::Base));
      p.setPen(palette().color(QPalette::Text));
      p.drawText(r, Qt::AlignCenter, n);
      p.setFont(font());
    }
  }
  if (c.copied) {
    const int k = std::max(3, std::min(r.width(), r.height()) / 2);
    QPainterPath corner;
    corner.moveTo(r.topLeft());
    corner.lineTo(r.left() + k, r.top());
    corner.lineTo(r.left(), r.top() + k);
    corner.closeSubpath();
    p.fillPath(corner, palette().color(QPalette::Text));
  }
}

// Every physical block of the shared cache's pool, by id: what the memory holds.
void PrefixBlockView::paint_pool(QPainter& p, const Geometry& g) const {
  p.setPen(palette().color(QPalette::Text));
  p.drawText(g.pool_caption, Qt::AlignLeft | Qt::AlignVCenter,
             tr("Physical blocks of the shared cache: %1 of %2 in use (a pool sized for N separate "
                "copies)")
                 .arg(used_blocks_)
                 .arg(pool_.size()));
  const int gap = g.pool_cell >= 8 ? 1 : 0;
  for (std::size_t b = 0; b < pool_.size(); ++b) {
    const QRect r = pool_cell_in(g, static_cast<int>(b)).adjusted(gap, gap, -gap, -gap);
    paint_cell(p, r, pool_[b], pool_[b].sample);
  }
}

// Physical blocks in use, shared cache vs N separate copies, on one scale.
void PrefixBlockView::paint_bars(QPainter& p, const Geometry& g) const {
  const int line = fontMetrics().height();
  const QString labels[2] = {tr("shared cache"), tr("%1 separate copies").arg(rows_.size())};
  const std::int64_t counts[2] = {used_blocks_, separate_blocks_};
  const QColor colors[2] = {series_color(0), series_color(5)};
  int label_w = 0;
  for (const QString& l : labels) label_w = std::max(label_w, fontMetrics().horizontalAdvance(l));
  const int value_w = fontMetrics().horizontalAdvance(tr("%1 blocks").arg(99999)) + 8;
  const int bar_w = std::max(10, g.bars.width() - label_w - value_w - 16);
  const double scale =
      static_cast<double>(bar_w) / static_cast<double>(std::max<std::int64_t>(1, separate_blocks_));
  for (int i = 0; i < 2; ++i) {
    const int y = g.bars.top() + i * (line + 6);
    p.setPen(palette().color(QPalette::Text));
    p.drawText(QRect(g.bars.left(), y, label_w, line + 4), Qt::AlignRight | Qt::AlignVCenter,
               labels[i]);
    const int w = std::max(1, static_cast<int>(scale * static_cast<double>(counts[i])));
    const QRect bar(g.bars.left() + label_w + 8, y + 2, w, line);
    p.fillRect(bar, colors[i]);
    p.drawText(QRect(bar.right() + 6, y, value_w, line + 4), Qt::AlignLeft | Qt::AlignVCenter,
               tr("%1 blocks").arg(counts[i]));
  }
}

void PrefixBlockView::paint_legend(QPainter& p, const QRect& area) const {
  struct Entry {
    Cell cell;
    int sample;
    QString text;
  };
  const auto full = static_cast<std::int32_t>(block_size_);
  const Entry entries[] = {
      {{0, 2, full, false}, 0, tr("shared by \u00d7N samples (refcount N)")},
      {{0, 1, full, false}, 0, tr("a sample's own block")},
      {{0, 1, std::max(1, full / 3), false}, 1, tr("partly filled tail")},
      {{0, 1, full, true}, 2, tr("copied on write")},
      {{}, 0, tr("free / not held yet")},
  };
  const int line = fontMetrics().height();
  const int box = std::min(14, line);
  int x = area.left();
  int y = area.top();
  for (const Entry& e : entries) {
    const int text_w = fontMetrics().horizontalAdvance(e.text);
    if (x > area.left() && x + box + 10 + text_w > area.right()) {  // next line
      x = area.left();
      y += line + 4;
    }
    paint_cell(p, QRect(x, y + (line - box) / 2, box + 6, box), e.cell, e.sample);
    p.setPen(palette().color(QPalette::Text));
    p.drawText(QRect(x + box + 10, y, text_w + 1, line), Qt::AlignLeft | Qt::AlignVCenter, e.text);
    x += box + 10 + text_w + 16;
  }
}

QRect PrefixBlockView::cellRect(int sample, int logical) const {
  if (sample < 0 || logical < 0 || static_cast<std::size_t>(sample) >= rows_.size() ||
      static_cast<std::size_t>(logical) >= rows_[static_cast<std::size_t>(sample)].size()) {
    return {};
  }
  return cell_in(geometry(), sample, logical);
}

QRect PrefixBlockView::cell_in(const Geometry& g, int sample, int logical) {
  return {g.grid.left() + logical * g.cell_w, g.grid.top() + sample * g.row_h, g.cell_w, g.row_h};
}

QString PrefixBlockView::describeAt(QPoint pos) const {
  if (rows_.empty()) return {};
  const Geometry g = geometry();
  const QPoint d = pos - g.pool_origin;
  if (d.x() >= 0 && d.y() >= 0 && d.x() < g.pool_cols * g.pool_cell) {
    const int block = (d.y() / g.pool_cell) * g.pool_cols + d.x() / g.pool_cell;
    if (block < static_cast<int>(pool_.size())) return describe_pool(block);
  }
  if (!g.grid.contains(pos)) return {};
  const auto s = static_cast<std::size_t>((pos.y() - g.grid.top()) / g.row_h);
  const auto i = static_cast<std::size_t>((pos.x() - g.grid.left()) / g.cell_w);
  if (s >= rows_.size() || i >= rows_[s].size()) return {};
  const Cell& c = rows_[s][i];
  QString text = tr("Sample %1, logical block %2 \u2192 physical block %3\nfilled: %4 / %5 tokens"
                    "\nrefcount: %6")
                     .arg(s)
                     .arg(i)
                     .arg(c.id)
                     .arg(c.filled)
                     .arg(block_size_)
                     .arg(c.refcount);
  if (c.refcount > 1) text += tr(" (shared)");
  if (c.copied) text += tr("\ncreated by a copy-on-write");
  return text;
}

QString PrefixBlockView::describe_pool(int block) const {
  const Cell& c = pool_[static_cast<std::size_t>(block)];
  if (c.refcount == 0) return tr("Physical block %1\nfree").arg(c.id);
  QString text = tr("Physical block %1\nfilled: %2 / %3 tokens\nrefcount: %4")
                     .arg(c.id)
                     .arg(c.filled)
                     .arg(block_size_)
                     .arg(c.refcount);
  text += c.refcount > 1 ? tr(" (shared by %1 samples)").arg(c.refcount)
                         : tr(" (sample %1)").arg(c.sample);
  if (c.copied) text += tr("\ncreated by a copy-on-write");
  return text;
}

bool PrefixBlockView::event(QEvent* event) {
  if (handle_hover_tooltip(this, event, [this](const QPoint& p) { return describeAt(p); })) {
    return true;
  }
  return QWidget::event(event);
}

}  // namespace kvscope::ui
