// PrefixBlockView: the prefix-sharing demo's block map. One row per sample, one cell per
// logical block of its block table (the real manager's), so a physical block shared by
// every sample appears in the same column of every row, hatched, with its refcount.
// Blocks a copy-on-write created carry a corner mark; a partly filled tail is filled to
// its level; a dashed line marks where the prompt ends. Below the rows, the physical pool
// (CacheSnapshot's blocks: shared, owned by a sample, or free) and two bars comparing the
// blocks in use with what N separate copies of the prompt take.
#pragma once

#include <QString>
#include <QWidget>

#include <cstdint>
#include <vector>

#include "kv/kv_ids.h"

namespace kvscope {
class PrefixSharingScenario;
}  // namespace kvscope

namespace kvscope::ui {

class PrefixBlockView : public QWidget {
  Q_OBJECT

 public:
  struct Cell {
    BlockId id = kNoBlock;
    std::int32_t refcount = 0;
    std::int32_t filled = 0;  // token slots of this sample's block in use
    bool copied = false;      // made by a copy-on-write
    int sample = -1;          // the (lowest) sample holding it; -1 when free
  };

  explicit PrefixBlockView(QWidget* parent = nullptr);

  void setScenario(const PrefixSharingScenario& scenario);
  // [n_samples][logical blocks] as last set.
  const std::vector<std::vector<Cell>>& rows() const { return rows_; }
  // [pool blocks] every physical block, by id, as last set.
  const std::vector<Cell>& pool() const { return pool_; }
  // Where the cell of a sample's logical block is drawn (empty when there is none).
  QRect cellRect(int sample, int logical) const;
  // The tooltip text for the cell under `pos` (empty when there is none).
  QString describeAt(QPoint pos) const;

  QSize sizeHint() const override { return {760, 420}; }
  QSize minimumSizeHint() const override { return {320, 200}; }

 protected:
  void paintEvent(QPaintEvent* event) override;
  bool event(QEvent* event) override;

 private:
  struct Geometry {
    QRect grid;  // the cells' area
    int label_w = 0;
    int cell_w = 1;
    int row_h = 1;
    QRect pool_caption;
    QPoint pool_origin;
    int pool_cell = 1;
    int pool_cols = 1;
    QRect bars;
    QRect legend;
  };

  Geometry geometry() const;
  static QRect cell_in(const Geometry& g, int sample, int logical);
  static QRect pool_cell_in(const Geometry& g, int block);
  QString describe_pool(int block) const;
  void paint_header(QPainter& p, const Geometry& g) const;
  void paint_cell(QPainter& p, const QRect& r, const Cell& c, int sample) const;
  void paint_pool(QPainter& p, const Geometry& g) const;
  void paint_bars(QPainter& p, const Geometry& g) const;
  void paint_legend(QPainter& p, const QRect& area) const;
  QColor shared_color() const;

  std::vector<std::vector<Cell>> rows_;
  std::vector<Cell> pool_;
  std::int64_t columns_ = 0;  // logical blocks of a finished sample
  std::int64_t block_size_ = 16;
  std::int64_t prompt_tokens_ = 0;
  std::int64_t used_blocks_ = 0;      // physical, shared cache
  std::int64_t separate_blocks_ = 0;  // physical, N separate copies
};

}  // namespace kvscope::ui
