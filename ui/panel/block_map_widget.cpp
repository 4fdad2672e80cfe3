#include "panel/block_map_widget.h"

#include <QAction>
#include <QPainter>

#include <algorithm>

#include "chat/colors.h"
#include "kv/format/kv_format.h"
#include "plan/units.h"
#include "widgets/block_cell_painter.h"
#include "widgets/export_file.h"
#include "widgets/hover_tooltip.h"

namespace kvscope::ui {
namespace {

constexpr int kMargin = 4;
constexpr int kMaxCell = 16;
constexpr int kMinCell = 3;
constexpr int kHeadingGap = 4;  // px below a split's side heading

// "0-4, 6-10, 12-16": runs of consecutive layers as ranges, so Gemma's five sliding layers in
// six, or 30 layers in one group ("0-29"), read at a glance instead of being cut off.
QString layer_list(const std::vector<std::int64_t>& layers) {
  QStringList out;
  for (std::size_t i = 0; i < layers.size();) {
    std::size_t j = i;
    while (j + 1 < layers.size() && layers[j + 1] == layers[j] + 1) ++j;
    out << (j == i ? QString::number(layers[i])
                   : QStringLiteral("%1-%2").arg(layers[i]).arg(layers[j]));
    i = j + 1;
  }
  return out.join(QStringLiteral(", "));
}

QString dtype(KvDtype d) {
  const std::string_view n = kv_dtype_name(d);
  return QString::fromLatin1(n.data(), static_cast<qsizetype>(n.size()));
}

}  // namespace

BlockMapWidget::BlockMapWidget(QWidget* parent) : QWidget(parent) {
  setMouseTracking(true);
  setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
  auto* save = new QAction(tr("Save block map as PNG\u2026"), this);
  save->setObjectName(QStringLiteral("exportPng"));
  connect(save, &QAction::triggered, this, [this, save] {
    export_with_dialog(this, save->text(), QStringLiteral("block-map.png"), tr("PNG image (*.png)"),
                       [this](const QString& path) { return save_widget_png(this, path); });
  });
  addAction(save);
  setContextMenuPolicy(Qt::ActionsContextMenu);
}

void BlockMapWidget::setFrame(const PanelFrame& frame) {
  groups_ = frame.cache.groups;
  block_size_ = std::max<std::int64_t>(1, frame.cache.block_size);
  gpu_layers_ = frame.split ? frame.split->gpu_layers : 0;
  owners_ = frame.owners;
  api_ = frame.api;
  relayout();
  update();
}

std::int64_t BlockMapWidget::usedBlocks() const {
  std::int64_t used = 0;
  for (const LayerGroupSnapshot& g : groups_) used += g.n_used;
  return used;
}

void BlockMapWidget::setChatNames(std::map<ChatId, QString> names) {
  names_ = std::move(names);
  update();
}

std::int64_t BlockMapWidget::blockCount() const {
  std::int64_t n = 0;
  for (const auto& g : groups_) n += g.n_blocks;
  return n;
}

void BlockMapWidget::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  relayout();
}

// A split's two headings, each naming the layers its side's groups hold (as the groups' own
// headers write them); none without a split.
void BlockMapWidget::make_sections() {
  sections_.clear();
  if (gpu_layers_ <= 0) return;
  for (const SplitSide side : {SplitSide::Gpu, SplitSide::Cpu}) {
    Section s;
    s.side = side;
    s.groups = side_groups(groups_, side, gpu_layers_);
    std::vector<std::int64_t> layers;
    for (const std::size_t g : s.groups) {
      layers.insert(layers.end(), groups_[g].layers.begin(), groups_[g].layers.end());
    }
    std::sort(layers.begin(), layers.end());
    layers.erase(std::unique(layers.begin(), layers.end()), layers.end());
    s.heading = side == SplitSide::Gpu
                    ? tr("GPU \u00b7 layers %1 \u00b7 KV in VRAM").arg(layer_list(layers))
                    : tr("CPU \u00b7 layers %1 \u00b7 KV in RAM").arg(layer_list(layers));
    sections_.push_back(std::move(s));
  }
}

std::pair<int, bool> BlockMapWidget::pick_cell(int width, int height) const {
  for (int c = kMaxCell; c >= kMinCell; --c) {
    const int cols = std::max(1, width / c);
    std::int64_t rows = 0;
    for (const auto& g : groups_) rows += (g.n_blocks + cols - 1) / cols;
    if (rows * c <= height) return {c, true};
  }
  return {kMinCell, false};
}

// Picks the largest cell size at which every group's blocks fit one cell each; when even
// the smallest does not fit, each group gets an equal share of rows and cells hold runs. A
// split's headings take a line each, above their side's groups.
void BlockMapWidget::relayout() {
  layout_.assign(groups_.size(), {});
  make_sections();
  const int line = fontMetrics().height();
  legend_ = QRect(kMargin, height() - kMargin - line, width() - 2 * kMargin, line);
  if (groups_.empty()) return;
  const int n_groups = static_cast<int>(groups_.size());
  const int n_headings = static_cast<int>(sections_.size());
  const int avail_w = std::max(1, width() - 2 * kMargin);
  const int avail_h = std::max(
      1, legend_.top() - kMargin - n_groups * (line + 6) - n_headings * (line + kHeadingGap));
  const auto [cell, fits] = pick_cell(avail_w, avail_h);
  const int rows_each = std::max(1, avail_h / cell / n_groups);
  int y = kMargin;
  if (sections_.empty()) {
    for (std::size_t g = 0; g < groups_.size(); ++g) place_group(g, y, cell, fits, rows_each);
    return;
  }
  for (Section& s : sections_) {
    s.rect = QRect(kMargin, y, avail_w, line);
    y += line + kHeadingGap;
    for (const std::size_t g : s.groups) place_group(g, y, cell, fits, rows_each);
  }
}

// Lays out group `g` from y down (its header line, then its cells) and moves y below it.
void BlockMapWidget::place_group(std::size_t g, int& y, int cell, bool fits, int rows_each) {
  const int line = fontMetrics().height();
  const int cols = std::max(1, (width() - 2 * kMargin) / cell);
  GroupLayout& L = layout_[g];
  const std::int64_t n = groups_[g].n_blocks;
  L.cell = cell;
  L.cols = cols;
  L.bucket = fits ? 1
                  : static_cast<int>(std::max<std::int64_t>(
                        1, (n + std::int64_t{cols} * rows_each - 1) / (cols * rows_each)));
  L.n_cells = static_cast<int>((n + L.bucket - 1) / L.bucket);
  L.header = QRect(kMargin, y, std::max(1, width() - 2 * kMargin), line);
  L.origin = QPoint(kMargin, y + line + 2);
  y = L.origin.y() + ((L.n_cells + cols - 1) / cols) * cell + 4;
}

BlockMapWidget::CellState BlockMapWidget::cell_state(std::size_t group, int cell) const {
  const GroupLayout& L = layout_[group];
  const auto& blocks = groups_[group].blocks;
  CellState s;
  const std::size_t first = static_cast<std::size_t>(cell) * static_cast<std::size_t>(L.bucket);
  const std::size_t last = std::min(blocks.size(), first + static_cast<std::size_t>(L.bucket));
  for (std::size_t i = first; i < last; ++i) {
    const BlockInfo& b = blocks[i];
    ++s.n;
    if (b.is_free()) continue;
    ++s.used;
    if (b.is_shared()) ++s.shared;
    if (b.exact_copy) ++s.exact;
    if (s.owner < 0) s.owner = b.owner;
    s.fill = static_cast<double>(b.filled_slots) / static_cast<double>(block_size_);
  }
  if (s.n > 1) s.fill = static_cast<double>(s.used) / s.n;
  return s;
}

QColor BlockMapWidget::owner_color(SeqId seq) const {
  if (auto api = api_.find(seq); api != api_.end()) return api_color(api->second);
  auto it = owners_.find(seq);
  return it != owners_.end() ? chat_color(it->second) : palette().color(QPalette::Mid);
}

QString BlockMapWidget::owner_name(SeqId seq) const {
  if (auto api = api_.find(seq); api != api_.end()) {
    return tr("API #%1 (sequence %2)").arg(api->second).arg(seq);
  }
  auto it = owners_.find(seq);
  if (it == owners_.end()) return tr("sequence %1").arg(seq);
  auto name = names_.find(it->second);
  return name != names_.end() ? tr("%1 (sequence %2)").arg(name->second).arg(seq)
                              : tr("chat %1 (sequence %2)").arg(it->second).arg(seq);
}

QString BlockMapWidget::groupTitle(std::size_t g) const {
  const LayerGroupSnapshot& s = groups_[g];
  const QString window =
      s.window > 0 ? tr("sliding window %1").arg(s.window) : tr("full attention");
  return tr("Group %1 \u00b7 layers %2 \u00b7 %3 \u00b7 K %4 / V %5 \u00b7 %6 of %7 blocks used, "
            "%8 shared")
      .arg(g)
      .arg(layer_list(s.layers), window, dtype(s.k_dtype), dtype(s.v_dtype))
      .arg(s.n_used)
      .arg(s.n_blocks)
      .arg(s.n_shared);
}

void BlockMapWidget::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.fillRect(rect(), palette().color(QPalette::Base));
  if (groups_.empty()) {
    p.setPen(palette().color(QPalette::PlaceholderText));
    p.drawText(rect(), Qt::AlignCenter, tr("No model loaded"));
    return;
  }
  paint_headings(p);
  for (std::size_t g = 0; g < groups_.size(); ++g) {
    const GroupLayout& L = layout_[g];
    p.setPen(palette().color(QPalette::Text));
    p.drawText(L.header, Qt::AlignLeft | Qt::AlignVCenter,
               fontMetrics().elidedText(groupTitle(g), Qt::ElideRight, L.header.width()));
    for (int c = 0; c < L.n_cells; ++c) {
      const QRect r(L.origin.x() + (c % L.cols) * L.cell, L.origin.y() + (c / L.cols) * L.cell,
                    L.cell - 1, L.cell - 1);
      paint_cell(p, r, cell_state(g, c));
    }
  }
  paint_legend(p);
}

// A split's side headings: bold, with a rule under each across the widget.
void BlockMapWidget::paint_headings(QPainter& p) const {
  QFont bold = font();
  bold.setBold(true);
  const QFontMetrics fm(bold);
  p.save();
  p.setFont(bold);
  for (const Section& s : sections_) {
    p.setPen(palette().color(QPalette::Text));
    p.drawText(s.rect, Qt::AlignLeft | Qt::AlignVCenter,
               fm.elidedText(s.heading, Qt::ElideRight, s.rect.width()));
    p.setPen(QPen(palette().color(QPalette::Mid), 1));
    p.drawLine(s.rect.bottomLeft() + QPoint(0, 2), s.rect.bottomRight() + QPoint(0, 2));
  }
  p.restore();
}

void BlockMapWidget::paint_cell(QPainter& p, const QRect& r, const CellState& s) const {
  if (s.used == 0) {
    paint_free_cell(p, r, palette());
    return;
  }
  paint_block_cell(p, r, {owner_color(s.owner), s.fill, s.shared > 0}, palette());
  if (s.shared > 0) {  // framed, so a shared block stands out from a full one
    p.setPen(QPen(palette().color(QPalette::Text), 1));
    p.setBrush(Qt::NoBrush);
    p.drawRect(r.adjusted(0, 0, -1, -1));
  }
  if (s.exact > 0) {  // the corner cut: this block is also read from its f16 copy
    const int k = std::max(3, r.width() / 3);
    const QPoint corner = r.topRight() + QPoint(1, 0);
    const QPolygon cut({corner, corner - QPoint(k, 0), corner + QPoint(0, k)});
    p.setPen(Qt::NoPen);
    p.setBrush(palette().color(QPalette::Text));
    p.drawPolygon(cut);
  }
}

QString BlockMapWidget::describeAt(QPoint pos) const {
  for (std::size_t g = 0; g < layout_.size(); ++g) {
    const GroupLayout& L = layout_[g];
    const QPoint d = pos - L.origin;
    if (d.x() < 0 || d.y() < 0 || d.x() >= L.cols * L.cell) continue;
    const int c = (d.y() / L.cell) * L.cols + d.x() / L.cell;
    if (c >= L.n_cells) continue;
    const LayerGroupSnapshot& s = groups_[g];
    const QString bytes = QString::fromStdString(human_bytes(s.block_bytes));
    if (L.bucket > 1) {
      const CellState st = cell_state(g, c);
      const std::int64_t first = std::int64_t{c} * L.bucket;
      QString text = tr("Group %1, blocks %2\u2013%3\n%4 in use, %5 shared\n%6 each")
                         .arg(g)
                         .arg(first)
                         .arg(first + st.n - 1)
                         .arg(st.used)
                         .arg(st.shared)
                         .arg(bytes);
      if (st.exact > 0) text += tr("\n%1 also kept as f16 copies (exact tail)").arg(st.exact);
      return text;
    }
    const BlockInfo& b = s.blocks[static_cast<std::size_t>(c)];
    if (b.is_free()) return tr("Group %1, block %2\nfree\n%3").arg(g).arg(b.id).arg(bytes);
    QString text = tr("Group %1, block %2\nowner: %3\nfilled: %4 / %5 tokens\nrefcount: %6%7\n%8")
                       .arg(g)
                       .arg(b.id)
                       .arg(owner_name(b.owner))
                       .arg(b.filled_slots)
                       .arg(block_size_)
                       .arg(b.refcount)
                       .arg(b.is_shared() ? tr(" (shared)") : QString())
                       .arg(bytes);
    if (b.exact_copy) {
      text += tr("\nalso an f16 copy of %1 (exact tail): the newest queries read it instead")
                  .arg(QString::fromStdString(human_bytes(s.exact_copy_bytes)));
    }
    return text;
  }
  return {};
}

bool BlockMapWidget::event(QEvent* event) {
  if (handle_hover_tooltip(this, event, [this](const QPoint& p) { return describeAt(p); })) {
    return true;
  }
  return QWidget::event(event);
}

}  // namespace kvscope::ui
