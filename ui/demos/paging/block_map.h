// PagingBlockMap: the memory of the three policies side by side, each as the same raster
// of token slots in address order (left to right, row after row), so a reservation, a
// hole or a paged block sits at the same place in every column. A sequence's slots are in
// its colour: solid where tokens are stored, faint where reserved for tokens to come,
// hatched where held but never to be filled (internal waste); free holes too small for
// the waiting request are hatched red (external fragmentation). Paged blocks are drawn as
// cells. Hovering tells the owner and the counts.
#pragma once

#include <QString>
#include <QWidget>

#include <vector>

#include "sim/sim_frame.h"

namespace kvscope::ui {

struct PagingMapColumn {
  QString title;
  QString status;   // queue figures of the current step
  QString figures;  // slot states of the current step
  SimBlockMap map;
};

class PagingBlockMap : public QWidget {
  Q_OBJECT

 public:
  explicit PagingBlockMap(QWidget* parent = nullptr);

  void setColumns(std::vector<PagingMapColumn> columns);
  // Text shown instead of the maps when there are no columns.
  void setPlaceholder(const QString& text);
  const std::vector<PagingMapColumn>& columns() const { return columns_; }
  // Token slots of one drawn cell: the paged block size when every block gets a cell, 0
  // when the capacity is too large for that and rows are drawn as continuous strips.
  std::int64_t cellSlots() const { return raster_.cell_slots; }
  // Token slots of one raster row.
  std::int64_t rowSlots() const { return raster_.row_slots; }
  // The tooltip text for `pos` (empty outside the rasters).
  QString describeAt(QPoint pos) const;
  // Sequence colour (request ids cycle through 8 hues, none of them red).
  static QColor ownerColor(std::int64_t request);

  QSize sizeHint() const override { return {900, 320}; }
  QSize minimumSizeHint() const override { return {480, 200}; }

 protected:
  void paintEvent(QPaintEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;
  bool event(QEvent* event) override;

 private:
  // Geometry shared by the columns: the same capacity in the same rows.
  struct Raster {
    int row_h = 8;                // pixels per row, a 1-pixel gap included when >= 4
    int width = 1;                // pixels per row
    std::int64_t row_slots = 1;   // token slots per row
    int cell = 0;                 // pixels per cell when blocks are drawn as cells
    std::int64_t cell_slots = 0;  // slots per cell; 0: continuous strips
    int header = 0;               // pixels above the raster in each column
  };

  void relayout();
  QRect column_rect(std::size_t i) const;
  QRect raster_rect(std::size_t i) const;
  QRectF slot_rect(const QRect& area, std::int64_t row, std::int64_t a, std::int64_t b) const;
  void fill_run(QPainter& p, const QRect& area, std::int64_t a, std::int64_t b,
                const QBrush& brush) const;
  void paint_column(QPainter& p, std::size_t i) const;
  void paint_spans(QPainter& p, const QRect& area, const SimBlockMap& map) const;
  void paint_cell_lines(QPainter& p, const QRect& area, const SimBlockMap& map) const;
  void paint_legend(QPainter& p) const;
  QString describe_slot(const SimBlockMap& map, std::int64_t slot) const;

  std::vector<PagingMapColumn> columns_;
  QString placeholder_;
  Raster raster_;
  QRect legend_;
};

}  // namespace kvscope::ui
