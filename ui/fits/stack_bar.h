// FitsStackBar: where the GPU's memory goes under a plan, as one horizontal bar: weights,
// the KV cache the batch needs, workspace and what is left free, stacked from the left up
// to the usable mark (total x utilisation), and the part the utilisation keeps back hatched
// after it. A plan that does not fit runs past the usable mark, and the overflow is
// outlined in red. Every width is a MemoryPlan field; the bar adds nothing of its own.
#pragma once

#include <QWidget>

#include <array>
#include <cstdint>

#include "plan/memory_model.h"

class QPainter;

namespace kvscope::ui {

class FitsStackBar : public QWidget {
  Q_OBJECT

 public:
  enum Part { Weights, Kv, Workspace, Free, kParts };

  explicit FitsStackBar(QWidget* parent = nullptr);

  // weights = plan.weights.bytes, KV = plan.kv.pool_bytes_needed, workspace =
  // plan.workspace.total(), free = plan.margin_bytes when positive; usable =
  // plan.usable_bytes; needed = plan.total_needed (the bar's end when it runs past the
  // usable mark); total = the GPU's memory.
  void setPlan(const MemoryPlan& plan, std::int64_t total_bytes);

  std::int64_t partBytes(Part part) const { return parts_[static_cast<std::size_t>(part)]; }
  std::int64_t usableBytes() const { return usable_; }
  std::int64_t totalBytes() const { return total_; }
  std::int64_t shortBytes() const { return short_; }  // > 0 when the plan does not fit
  std::int64_t neededBytes() const { return needed_; }

  static QColor partColor(Part part);

  QSize sizeHint() const override;
  QSize minimumSizeHint() const override;

 protected:
  void paintEvent(QPaintEvent* event) override;

 private:
  void draw_scale(QPainter& p, int usable_x, std::int64_t needed);

  std::array<std::int64_t, kParts> parts_{};
  std::int64_t usable_ = 0;
  std::int64_t total_ = 0;
  std::int64_t short_ = 0;
  std::int64_t needed_ = 0;
};

}  // namespace kvscope::ui
