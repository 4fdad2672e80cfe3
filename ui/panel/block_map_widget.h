// BlockMapWidget: every physical KV block of every layer group, one cell each, coloured by
// the chat that owns it (or the API request, "API #n", while the app serves its model); shared
// blocks (refcount > 1) are hatched, a partly filled tail is filled to its level, free blocks are
// empty frames, and a block that also has an f16 copy (an int4/int8 group's exact tail,
// kv/exact_tail.h) has its top-right corner cut in the text colour. Hovering a cell tells its id,
// owner, fill, refcount and bytes. When a pool has more blocks than fit, each cell stands for a run
// of consecutive blocks (the tooltip says which and how many are in use). A model split between
// GPU and CPU has groups per side (plan/model_layer_groups.h: split_layer_groups): each side's
// groups are drawn under a "GPU" or a "CPU" heading. The legend is laid out in
// block_map_legend.cpp.
#pragma once

#include <QRect>
#include <QString>
#include <QStringList>
#include <QWidget>

#include <map>
#include <utility>
#include <vector>

#include "panel/split_sides.h"
#include "worker/engine_messages.h"

namespace kvscope::ui {

class BlockMapWidget : public QWidget {
  Q_OBJECT

 public:
  explicit BlockMapWidget(QWidget* parent = nullptr);

  void setFrame(const PanelFrame& frame);
  void setChatNames(std::map<ChatId, QString> names);
  // Who owns `seq`: "API #n (sequence s)", the chat's name, or "sequence s".
  QString ownerName(SeqId seq) const { return owner_name(seq); }
  const std::map<SeqId, std::int64_t>& apiSequences() const { return api_; }
  std::int64_t usedBlocks() const;  // in all groups, as the last frame had them
  // The tooltip text for the cell under `pos` (empty when there is none).
  QString describeAt(QPoint pos) const;
  std::int64_t blockCount() const;
  // The header of a group: "Group 1 · layers 0-4, 6-10 · sliding window 512 · K f16 / V f16 ·
  // 36 of 2048 blocks used, 0 shared".
  QString groupTitle(std::size_t group) const;
  // The legend's texts as drawn (owners elided, "+N more", then the key).
  QStringList legendTexts() const;

  // One side of a split: its heading ("GPU · layers 0-11 · KV in VRAM") and its groups, drawn
  // below the heading in this order.
  struct Section {
    SplitSide side = SplitSide::Gpu;
    QString heading;
    QRect rect;  // where the heading is drawn
    std::vector<std::size_t> groups;
  };
  // The GPU's section, then the CPU's; none without a split.
  const std::vector<Section>& sections() const { return sections_; }
  QRect groupHeaderRect(std::size_t group) const { return layout_.at(group).header; }

  QSize sizeHint() const override { return {520, 220}; }
  QSize minimumSizeHint() const override { return {200, 90}; }

 protected:
  void paintEvent(QPaintEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;
  bool event(QEvent* event) override;

 private:
  struct GroupLayout {
    QRect header;
    QPoint origin;  // top-left of the first cell
    int cols = 1;
    int cell = 8;    // pixels per cell, gap included
    int bucket = 1;  // blocks per cell
    int n_cells = 0;
  };
  struct CellState {
    int used = 0, shared = 0, n = 0;
    SeqId owner = -1;
    double fill = 1.0;  // of the one block, when a cell is one block
    int exact = 0;      // blocks with an f16 copy
  };

  void relayout();
  void make_sections();
  // The largest cell size (px) at which every group's blocks fit one cell each in the area,
  // and whether it does; kMinCell and false when none does.
  std::pair<int, bool> pick_cell(int width, int height) const;
  void place_group(std::size_t group, int& y, int cell, bool fits, int rows_each);
  CellState cell_state(std::size_t group, int cell) const;
  void paint_cell(QPainter& p, const QRect& r, const CellState& s) const;
  void paint_headings(QPainter& p) const;
  struct LegendItem {
    CellState state;
    QString text;
    QRect cell;  // null: no cell ("+N more")
    QRect text_rect;
    QString name;  // a chat's name: what is left, shortened, when `text` is too wide
  };
  std::vector<LegendItem> legend_items() const;
  LegendItem chat_legend_item(ChatId chat, const std::vector<SeqId>& seqs) const;
  static QString elided_legend_text(const LegendItem& e, const QFontMetrics& fm, int width);
  void paint_legend(QPainter& p) const;
  QColor owner_color(SeqId seq) const;
  QString owner_name(SeqId seq) const;

  std::vector<LayerGroupSnapshot> groups_;
  std::int64_t block_size_ = 16;
  std::int64_t gpu_layers_ = 0;  // a split's (0: none)
  std::vector<Section> sections_;
  std::map<SeqId, ChatId> owners_;
  std::map<SeqId, std::int64_t> api_;  // API request n of each sequence serving one
  std::map<ChatId, QString> names_;
  std::vector<GroupLayout> layout_;
  QRect legend_;
};

}  // namespace kvscope::ui
