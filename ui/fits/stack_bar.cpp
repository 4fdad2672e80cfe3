#include "fits/stack_bar.h"

#include <QPainter>

#include <algorithm>

#include "widgets/number_text.h"

namespace kvscope::ui {

namespace {

// The live panel's memory chart colours for the same parts.
constexpr std::array<QRgb, FitsStackBar::kParts> kColors = {0x4e79a7, 0xe15759, 0x59a14f, 0xbab0ac};
const char* const kNames[FitsStackBar::kParts] = {
    QT_TRANSLATE_NOOP("kvscope::ui::FitsStackBar", "weights"),
    QT_TRANSLATE_NOOP("kvscope::ui::FitsStackBar", "KV"),
    QT_TRANSLATE_NOOP("kvscope::ui::FitsStackBar", "workspace"),
    QT_TRANSLATE_NOOP("kvscope::ui::FitsStackBar", "free")};
constexpr int kBarHeight = 30;
constexpr QRgb kShortColor = 0xd62728;

QColor text_on(const QColor& fill) {
  return fill.lightnessF() > 0.6 ? QColor(Qt::black) : QColor(Qt::white);
}

}  // namespace

FitsStackBar::FitsStackBar(QWidget* parent) : QWidget(parent) {
  setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
}

QColor FitsStackBar::partColor(Part part) {
  return QColor(kColors[static_cast<std::size_t>(part)]);
}

void FitsStackBar::setPlan(const MemoryPlan& plan, std::int64_t total_bytes) {
  parts_[Weights] = plan.weights.bytes;
  parts_[Kv] = plan.kv.pool_bytes_needed;
  parts_[Workspace] = plan.workspace.total();
  parts_[Free] = std::max<std::int64_t>(0, plan.margin_bytes);
  short_ = std::max<std::int64_t>(0, -plan.margin_bytes);
  needed_ = plan.total_needed;
  usable_ = plan.usable_bytes;
  total_ = total_bytes;
  update();
}

QSize FitsStackBar::sizeHint() const {
  return {600, minimumSizeHint().height()};
}

QSize FitsStackBar::minimumSizeHint() const {
  return {200, kBarHeight + 4 + fontMetrics().height() + 2};
}

void FitsStackBar::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.setRenderHint(QPainter::Antialiasing, false);
  const QRect bar(0, 0, width() - 1, kBarHeight);
  p.fillRect(bar, palette().color(QPalette::Base));
  const std::int64_t needed = needed_;
  const double span = static_cast<double>(std::max({total_, usable_, needed, std::int64_t{1}}));
  auto x_of = [&](std::int64_t bytes) {
    return bar.left() +
           static_cast<int>(static_cast<double>(bar.width()) * static_cast<double>(bytes) / span);
  };
  // What the utilisation keeps back, hatched.
  const int usable_x = x_of(std::max<std::int64_t>(0, usable_));
  p.fillRect(QRect(QPoint(usable_x, bar.top()), bar.bottomRight()),
             QBrush(palette().color(QPalette::Mid), Qt::BDiagPattern));
  std::int64_t start = 0;
  for (int part = 0; part < kParts; ++part) {
    const std::int64_t bytes = parts_[static_cast<std::size_t>(part)];
    const QRect r(QPoint(x_of(start), bar.top()), QPoint(x_of(start + bytes), bar.bottom()));
    start += bytes;
    if (r.width() <= 0) continue;
    const QColor fill = partColor(static_cast<Part>(part));
    p.fillRect(r, fill);
    const QString label = tr(kNames[part]) + QLatin1Char(' ') + bytes_text(bytes);
    if (p.fontMetrics().horizontalAdvance(label) + 8 <= r.width()) {
      p.setPen(text_on(fill));
      p.drawText(r, Qt::AlignCenter, label);
    }
  }
  if (short_ > 0) {
    // The overflow past the usable mark, hatched and outlined in red over the parts.
    const QRect over(QPoint(usable_x, bar.top() + 1), QPoint(x_of(needed), bar.bottom() - 1));
    p.fillRect(over, QBrush(QColor(kShortColor), Qt::FDiagPattern));
    p.setPen(QPen(QColor(kShortColor), 2));
    p.drawRect(over);
  }
  p.setPen(QPen(palette().color(QPalette::Text), 2));
  p.drawLine(usable_x, bar.top(), usable_x, bar.bottom() + 4);
  p.setPen(QPen(palette().color(QPalette::Mid), 1));
  p.drawRect(bar);
  draw_scale(p, usable_x, needed > total_ ? needed : 0);
}

// Under the bar: 0 at the left, the usable mark ending at its line, and what the plan
// needs at the right end when it runs past the GPU's memory.
void FitsStackBar::draw_scale(QPainter& p, int usable_x, std::int64_t needed) {
  p.setPen(palette().color(QPalette::Text));
  const QFontMetrics fm = p.fontMetrics();
  const QRect row(0, kBarHeight + 3, width(), fm.height() + 2);
  p.drawText(row, Qt::AlignLeft | Qt::AlignVCenter, QStringLiteral("0"));
  int right_limit = width();
  if (needed > 0) {
    const QString text = tr("needed %1").arg(bytes_text(needed));
    p.drawText(row, Qt::AlignRight | Qt::AlignVCenter, text);
    right_limit -= fm.horizontalAdvance(text) + 12;
  }
  const QString usable = tr("usable %1 of %2").arg(bytes_text(usable_), bytes_text(total_));
  const int w = fm.horizontalAdvance(usable);
  const int right = std::max(fm.horizontalAdvance(QStringLiteral("0")) + 12 + w,
                             std::min(usable_x + 1, right_limit));
  p.drawText(QRect(right - w, row.top(), w, row.height()), Qt::AlignRight | Qt::AlignVCenter,
             usable);
}

}  // namespace kvscope::ui
