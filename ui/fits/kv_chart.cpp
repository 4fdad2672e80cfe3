#include "fits/kv_chart.h"

#include <QChart>
#include <QLabel>
#include <QLineSeries>
#include <QVBoxLayout>
#include <QValueAxis>

#include <algorithm>
#include <cmath>

#include "widgets/chart_legend.h"
#include "widgets/chart_style.h"
#include "widgets/number_text.h"

namespace kvscope::ui {

namespace {

constexpr double kKiB = 1024.0;
constexpr double kMiB = kKiB * 1024.0;
constexpr double kGiB = kMiB * 1024.0;
constexpr QRgb kBudgetColor = 0xd62728;
constexpr std::array<Qt::PenStyle, FitsKvChart::kDtypes> kDtypeStyles = {Qt::SolidLine,
                                                                         Qt::DashLine, Qt::DotLine};

// Axis ticks at 1, 2, 2.5 or 5 x 10^k, five intervals or fewer up to `top`.
double tick_step(double top) {
  const double raw = top / 5;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  for (const double m : {1.0, 2.0, 2.5, 5.0}) {
    if (m * magnitude >= raw) return m * magnitude;
  }
  return 10 * magnitude;
}

QString heads_text(std::int64_t heads) {
  return heads == 1 ? QObject::tr("1 KV head") : QObject::tr("%1 KV heads").arg(heads);
}

QString dtype_text(KvDtype dtype) {
  return QString::fromUtf8(kv_dtype_name(dtype).data());
}

}  // namespace

FitsKvChart::FitsKvChart(QWidget* parent)
    : ChartFrame(parent),
      style_key_(new QLabel(this)),
      own_(new QLineSeries(this)),
      budget_(new QLineSeries(this)),
      context_(new QLineSeries(this)),
      x_(new QValueAxis),
      y_(new QValueAxis) {
  QVBoxLayout* layout = column();
  layout->addWidget(style_key_);
  style_key_->setAlignment(Qt::AlignHCenter);
  style_key_->setFont(legend()->font());
  style_key_->setText(
      tr("K and V in f16 \u2501\u2501\u2501   int8 \u254d\u254d\u254d   int4 \u2505\u2505\u2505"));
  QChart* c = chart();
  c->setTitle(tr("KV cache vs context: attention layouts and dtypes"));
  c->addAxis(x_, Qt::AlignBottom);
  c->addAxis(y_, Qt::AlignLeft);
  for (auto& s : variants_) s = new QLineSeries(this);
  // Drawn in this order: variants under the model's own curve, marks on top.
  std::vector<QLineSeries*> all(variants_.begin(), variants_.end());
  all.insert(all.end(), {own_, budget_, context_});
  for (QLineSeries* s : all) {
    c->addSeries(s);
    s->attachAxis(x_);
    s->attachAxis(y_);
  }
  x_->setTitleText(tr("tokens per sequence"));
  x_->setLabelFormat(QStringLiteral("%.0f"));
  x_->setTickCount(5);
  y_->setLabelFormat(QStringLiteral("%.3g"));
  y_->setTickType(QValueAxis::TicksDynamic);
  y_->setTickAnchor(0);
  restyle();
}

QLineSeries* FitsKvChart::variantSeries(int layout, int dtype) const {
  return variants_[static_cast<std::size_t>(layout * kDtypes + dtype)];
}

void FitsKvChart::setCurves(const std::vector<KvCurve>& curves, std::int64_t kv_budget_bytes,
                            std::int64_t context) {
  std::int64_t own_max = 0;
  std::int64_t all_max = 0;
  std::int64_t x_max = 1;
  for (const KvCurve& c : curves) {
    for (const auto& [tokens, bytes] : c.points) {
      all_max = std::max(all_max, bytes);
      if (c.this_model) own_max = std::max(own_max, bytes);
      x_max = std::max(x_max, tokens);
    }
  }
  // Up to the model's own curve or the budget, whichever is higher; a budget far above
  // every curve (over 1.5x the highest) is named in the legend instead of drawn.
  const auto highest = static_cast<double>(all_max);
  const auto budget = static_cast<double>(kv_budget_bytes);
  const double reach = budget <= 1.5 * highest ? budget : highest;
  const double top = 1.08 * std::max({1.0, static_cast<double>(own_max), reach});
  unit_ = top >= kGiB ? kGiB : top >= kMiB ? kMiB : kKiB;
  y_->setTitleText(unit_ == kGiB ? tr("GiB") : unit_ == kMiB ? tr("MiB") : tr("KiB"));
  const auto to_points = [this](const KvCurve& c) {
    QList<QPointF> points;
    points.reserve(static_cast<qsizetype>(c.points.size()));
    for (const auto& [tokens, bytes] : c.points) {
      points.append(QPointF(static_cast<double>(tokens), static_cast<double>(bytes) / unit_));
    }
    return points;
  };
  std::array<bool, kLayouts * kDtypes> drawn{};
  for (const KvCurve& c : curves) {
    if (c.this_model) {
      own_->replace(to_points(c));
      continue;
    }
    const auto i = static_cast<std::size_t>(static_cast<int>(c.layout) * kDtypes +
                                            static_cast<int>(c.k_dtype));
    variants_[i]->replace(to_points(c));
    drawn[i] = true;
  }
  for (std::size_t i = 0; i < variants_.size(); ++i) {
    if (!drawn[i]) variants_[i]->clear();
    variants_[i]->setVisible(drawn[i]);
  }
  const double budget_y = static_cast<double>(kv_budget_bytes) / unit_;
  const bool budget_shown = static_cast<double>(kv_budget_bytes) <= top;
  budget_->replace({QPointF(0, budget_y), QPointF(static_cast<double>(x_max), budget_y)});
  budget_->setVisible(budget_shown);
  const auto ctx = static_cast<double>(context);
  x_->setRange(0, static_cast<double>(x_max));
  if (top != last_top_) {
    // Only on a change: a new range re-lays the chart out, the costliest step of an update.
    last_top_ = top;
    const double step = tick_step(top / unit_);
    y_->setTickInterval(step);
    y_->setRange(0, std::ceil(top / unit_ / step) * step);
  }
  context_->replace({QPointF(ctx, 0), QPointF(ctx, y_->max())});
  curves_ = curves;
  budget_bytes_ = kv_budget_bytes;
  budget_shown_ = budget_shown;
  context_tokens_ = context;
  update_legend();
}

void FitsKvChart::update_legend() {
  QVector<LegendEntry> entries;
  for (const KvCurve& c : curves_) {
    if (c.this_model) {
      entries.push_back(
          {palette().color(QPalette::Text),
           tr("this model (%1, K %2 / V %3)")
               .arg(heads_text(c.n_kv_heads), dtype_text(c.k_dtype), dtype_text(c.v_dtype)),
           true});
    } else if (c.k_dtype == KvDtype::F16) {
      entries.push_back(
          {series_color(static_cast<int>(c.layout)),
           QStringLiteral("%1 (%2)").arg(QString::fromUtf8(attention_layout_name(c.layout).data()),
                                         heads_text(c.n_kv_heads)),
           true});
    }
  }
  entries.push_back(
      {QColor(kBudgetColor),
       tr("KV budget %1%2")
           .arg(bytes_text(budget_bytes_), budget_shown_ ? QString() : tr(" (above the chart)")),
       true});
  entries.push_back(
      {palette().color(QPalette::Mid), tr("context %1").arg(count_text(context_tokens_)), true});
  legend()->setEntries(entries);
}

void FitsKvChart::restyle() {
  ChartFrame::restyle();
  for (int l = 0; l < kLayouts; ++l) {
    for (int d = 0; d < kDtypes; ++d) {
      variantSeries(l, d)->setPen(
          QPen(series_color(l), 1.5, kDtypeStyles[static_cast<std::size_t>(d)]));
    }
  }
  own_->setPen(QPen(palette().color(QPalette::Text), 3));
  budget_->setPen(QPen(QColor(kBudgetColor), 2));
  context_->setPen(QPen(palette().color(QPalette::Mid), 1.5, Qt::DashLine));
  update_legend();
}

}  // namespace kvscope::ui
