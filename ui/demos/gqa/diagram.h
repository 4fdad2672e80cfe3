// GqaDiagram: how query heads share KV heads. A row of n_heads query heads above a row of
// n_kv_heads KV heads; every query head is joined to the KV head whose K and V it reads,
// and each group (the n_heads / n_kv_heads query heads sharing one KV head) has its own
// colour. MHA (one KV head per query head), GQA and MQA (one KV head for all) all read
// at any head count up to 128 query heads.
#pragma once

#include <QColor>
#include <QWidget>

#include <cstdint>

namespace kvscope::ui {

class GqaDiagram : public QWidget {
  Q_OBJECT

 public:
  explicit GqaDiagram(QWidget* parent = nullptr);

  // n_kv_heads must divide n_heads (else nothing is drawn).
  void setHeads(std::int64_t n_heads, std::int64_t n_kv_heads);
  std::int64_t nHeads() const { return n_heads_; }
  std::int64_t nKvHeads() const { return n_kv_heads_; }
  // The KV head query head `q` reads: q / (n_heads / n_kv_heads).
  std::int64_t kvHeadOf(std::int64_t q) const;
  // The colour of a group (one per KV head).
  QColor groupColor(std::int64_t kv_head) const;
  // Centres of the drawn boxes (for tests and tooltips).
  QRect queryRect(std::int64_t q) const;
  QRect kvRect(std::int64_t kv) const;

  QSize sizeHint() const override { return {760, 230}; }
  QSize minimumSizeHint() const override { return {320, 170}; }

 protected:
  void paintEvent(QPaintEvent* event) override;

 private:
  struct Rows {
    QRect caption;
    int label_w = 0;
    int left = 0;
    int width = 0;
    int q_top = 0;
    int kv_top = 0;
    int box_h = 0;
  };
  Rows rows() const;
  void paint_box(QPainter& p, const QRect& r, const QColor& color, const QString& text) const;

  std::int64_t n_heads_ = 0;
  std::int64_t n_kv_heads_ = 0;
};

}  // namespace kvscope::ui
