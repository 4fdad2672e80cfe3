#include "demos/gqa/diagram.h"

#include <QPainter>

#include <algorithm>
#include <cmath>

namespace kvscope::ui {
namespace {

constexpr int kMargin = 8;
constexpr int kMaxBoxH = 26;
constexpr int kMaxKvBoxW = 64;

}  // namespace

GqaDiagram::GqaDiagram(QWidget* parent) : QWidget(parent) {
  setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
}

void GqaDiagram::setHeads(std::int64_t n_heads, std::int64_t n_kv_heads) {
  const bool valid = n_heads > 0 && n_kv_heads > 0 && n_heads % n_kv_heads == 0;
  n_heads_ = valid ? n_heads : 0;
  n_kv_heads_ = valid ? n_kv_heads : 0;
  update();
}

std::int64_t GqaDiagram::kvHeadOf(std::int64_t q) const {
  return n_kv_heads_ > 0 ? q / (n_heads_ / n_kv_heads_) : -1;
}

// Golden-ratio hue steps: neighbouring groups get clearly different hues at any count.
QColor GqaDiagram::groupColor(std::int64_t kv_head) const {
  const double hue = std::fmod(0.58 + 0.618033988749895 * static_cast<double>(kv_head), 1.0);
  return QColor::fromHsvF(static_cast<float>(hue), 0.5f, 0.92f);
}

GqaDiagram::Rows GqaDiagram::rows() const {
  Rows r;
  const int line = fontMetrics().height();
  r.label_w = std::max(fontMetrics().horizontalAdvance(tr("query heads")),
                       fontMetrics().horizontalAdvance(tr("KV heads"))) +
              12;
  r.left = kMargin + r.label_w;
  r.width = std::max(1, width() - r.left - kMargin);
  r.caption = QRect(kMargin, kMargin, width() - 2 * kMargin, line);
  r.box_h = std::clamp((height() - 2 * kMargin - 2 * line) / 5, 10, kMaxBoxH);
  r.q_top = r.caption.bottom() + 8;
  r.kv_top = height() - kMargin - line - 6 - r.box_h;
  return r;
}

QRect GqaDiagram::queryRect(std::int64_t q) const {
  const Rows r = rows();
  const double slot =
      static_cast<double>(r.width) / static_cast<double>(std::max<std::int64_t>(1, n_heads_));
  const int gap = slot >= 8 ? 2 : 0;
  const int x0 = r.left + static_cast<int>(std::lround(slot * static_cast<double>(q)));
  const int x1 = r.left + static_cast<int>(std::lround(slot * static_cast<double>(q + 1)));
  return {x0 + gap / 2, r.q_top, std::max(1, x1 - x0 - gap), r.box_h};
}

QRect GqaDiagram::kvRect(std::int64_t kv) const {
  const Rows r = rows();
  const std::int64_t group = n_heads_ / std::max<std::int64_t>(1, n_kv_heads_);
  const QRect first = queryRect(kv * group);
  const QRect last = queryRect((kv + 1) * group - 1);
  const int span = last.right() - first.left() + 1;
  const int w = std::min(span, std::max(first.width(), kMaxKvBoxW));
  const int cx = (first.left() + last.right() + 1) / 2;
  return {cx - w / 2, r.kv_top, w, r.box_h};
}

void GqaDiagram::paint_box(QPainter& p, const QRect& r, const QColor& color,
                           const QString& text) const {
  p.setPen(QPen(color.darker(160), 1));
  p.setBrush(color);
  p.drawRect(r.adjusted(0, 0, -1, -1));
  if (fontMetrics().horizontalAdvance(text) + 4 <= r.width() &&
      fontMetrics().height() <= r.height() + 2) {
    p.setPen(QColor(0x1a, 0x1a, 0x1a));  // the boxes are light in both themes
    p.drawText(r, Qt::AlignCenter, text);
  }
}

void GqaDiagram::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.setRenderHint(QPainter::Antialiasing);
  p.fillRect(rect(), palette().color(QPalette::Base));
  if (n_heads_ == 0) return;
  const Rows r = rows();
  const std::int64_t group = n_heads_ / n_kv_heads_;
  const QString kind = group == 1         ? tr("MHA: every query head has its own K and V")
                       : n_kv_heads_ == 1 ? tr("MQA: all query heads share one K and V")
                                          : tr("GQA: %1 query heads share each K and V").arg(group);
  p.setPen(palette().color(QPalette::Text));
  p.drawText(
      r.caption, Qt::AlignLeft | Qt::AlignVCenter,
      tr("%1 query heads \u2192 %2 KV heads \u00b7 %3").arg(n_heads_).arg(n_kv_heads_).arg(kind));
  p.drawText(QRect(kMargin, r.q_top, r.label_w - 8, r.box_h), Qt::AlignRight | Qt::AlignVCenter,
             tr("query heads"));
  p.drawText(QRect(kMargin, r.kv_top, r.label_w - 8, r.box_h), Qt::AlignRight | Qt::AlignVCenter,
             tr("KV heads"));
  // Lines first, so the boxes cover their ends; each fans into its KV head's top edge.
  for (std::int64_t q = 0; q < n_heads_; ++q) {
    const std::int64_t kv = q / group;
    const QRect from = queryRect(q);
    const QRect to = kvRect(kv);
    const double t = (static_cast<double>(q % group) + 0.5) / static_cast<double>(group);
    const QPointF end(to.left() + t * to.width(), to.top());
    p.setPen(QPen(groupColor(kv).darker(125), n_heads_ > 64 ? 1.0 : 1.5));
    p.drawLine(QPointF(from.center().x() + 0.5, from.bottom() + 1), end);
  }
  // Numbers on every query head or on none: the narrowest box must hold the widest one.
  int narrowest = queryRect(0).width();
  for (std::int64_t q = 1; q < n_heads_; ++q) narrowest = std::min(narrowest, queryRect(q).width());
  const bool numbers =
      fontMetrics().horizontalAdvance(QString::number(n_heads_ - 1)) + 4 <= narrowest;
  for (std::int64_t q = 0; q < n_heads_; ++q) {
    paint_box(p, queryRect(q), groupColor(q / group), numbers ? QString::number(q) : QString());
  }
  for (std::int64_t kv = 0; kv < n_kv_heads_; ++kv) {
    const QRect box = kvRect(kv);
    const QString full = tr("KV %1").arg(kv);
    paint_box(
        p, box, groupColor(kv),
        fontMetrics().horizontalAdvance(full) + 4 <= box.width() ? full : QString::number(kv));
  }
  p.setPen(palette().color(QPalette::Text));
  p.drawText(QRect(r.left, r.kv_top + r.box_h + 4, r.width, fontMetrics().height()),
             Qt::AlignLeft | Qt::AlignVCenter,
             tr("The cache stores K and V of every token for each KV head: %1 per layer.")
                 .arg(n_kv_heads_));
}

}  // namespace kvscope::ui
