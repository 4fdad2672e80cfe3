#include "demos/paging/chart.h"

#include <QChartView>
#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineSeries>
#include <QVBoxLayout>
#include <QValueAxis>

#include <algorithm>
#include <cmath>
#include <utility>

#include "demos/paging/names.h"
#include "widgets/chart_legend.h"
#include "widgets/chart_style.h"

namespace kvscope::ui {
namespace {

// At most this many points per line: a run can have tens of thousands of steps.
constexpr std::int64_t kMaxPoints = 1200;

// An axis from 0 to a round number at or above `max`, in 4 to 8 round intervals (1, 2,
// 2.5 or 5 times a power of ten), the one that overshoots least: {axis max, tick count}.
std::pair<double, int> round_axis(double max) {
  max = std::max(max, 1.0);
  double best_max = 0;
  int best_ticks = 5;
  for (int intervals = 4; intervals <= 8; ++intervals) {
    const double raw = max / intervals;
    const double power = std::pow(10.0, std::floor(std::log10(raw)));
    double step = 10 * power;
    for (const double m : {1.0, 2.0, 2.5, 5.0}) {
      if (m * power >= raw) {
        step = m * power;
        break;
      }
    }
    const double top = std::ceil(max / step - 1e-9) * step;
    if (best_max == 0 || top < best_max) {
      best_max = top;
      best_ticks = static_cast<int>(std::lround(top / step)) + 1;
    }
  }
  return {best_max, best_ticks};
}

}  // namespace

PagingUtilisationChart::PagingUtilisationChart(QWidget* parent)
    : ChartFrame(parent),
      metric_box_(new QComboBox(this)),
      marker_(new QLineSeries),
      x_(new QValueAxis),
      y_(new QValueAxis) {
  QVBoxLayout* layout = column();
  metric_box_->addItem(tr("Memory holding tokens (%)"));
  metric_box_->addItem(tr("Sequences running"));
  metric_box_->addItem(tr("Requests admitted so far"));
  auto* top = new QHBoxLayout;
  top->setContentsMargins(0, 0, 0, 0);
  top->addWidget(new QLabel(tr("Over time:"), this));
  top->addWidget(metric_box_, 1);
  layout->setSpacing(2);
  layout->insertLayout(0, top);
  setTabOrder(metric_box_, view());  // the box above the chart comes first
  QChart* c = chart();
  c->addAxis(x_, Qt::AlignBottom);
  c->addAxis(y_, Qt::AlignLeft);
  for (std::size_t i = 0; i < lines_.size(); ++i) {
    lines_[i] = new QLineSeries;
    c->addSeries(lines_[i]);
    lines_[i]->attachAxis(x_);
    lines_[i]->attachAxis(y_);
  }
  c->addSeries(marker_);
  marker_->attachAxis(x_);
  marker_->attachAxis(y_);
  x_->setTitleText(tr("step"));
  x_->setLabelFormat(QStringLiteral("%.0f"));
  x_->setTickCount(5);
  y_->setLabelFormat(QStringLiteral("%.0f"));
  y_->setTickCount(5);
  connect(metric_box_, &QComboBox::currentIndexChanged, this,
          [this](int index) { setMetric(static_cast<Metric>(index)); });
  restyle();
  refill();
}

void PagingUtilisationChart::setResult(const SimulationResult* result) {
  result_ = result;
  refill();
}

void PagingUtilisationChart::setMetric(Metric metric) {
  metric_ = metric;
  if (metric_box_->currentIndex() != static_cast<int>(metric)) {
    metric_box_->setCurrentIndex(static_cast<int>(metric));
  }
  refill();
}

double PagingUtilisationChart::value(const SimFrame& f) const {
  switch (metric_) {
    case Metric::Stored:
      return result_->config.capacity > 0 ? 100.0 * static_cast<double>(f.stored) /
                                                static_cast<double>(result_->config.capacity)
                                          : 0.0;
    case Metric::Running:
      return static_cast<double>(f.running);
    case Metric::Admitted:
      return static_cast<double>(f.admitted);
  }
  return 0.0;
}

void PagingUtilisationChart::refill() {
  QVector<LegendEntry> entries;
  double y_max = 1.0;
  std::int64_t steps = 1;
  for (std::size_t i = 0; i < lines_.size(); ++i) {
    QList<QPointF> points;
    if (result_ != nullptr && i < result_->runs.size()) {
      const PolicyRun& run = result_->runs[i];
      const auto n = static_cast<std::int64_t>(run.frames.size());
      const std::int64_t every = std::max<std::int64_t>(1, (n + kMaxPoints - 1) / kMaxPoints);
      for (std::int64_t s = 0; s < n; s += every) {
        const SimFrame& f = run.frames[static_cast<std::size_t>(s)];
        points.append(QPointF(static_cast<double>(f.step), value(f)));
        y_max = std::max(y_max, points.back().y());
      }
      if (n > 0 && (n - 1) % every != 0) {
        points.append(QPointF(static_cast<double>(n - 1), value(run.frames.back())));
      }
      steps = std::max(steps, n);
      entries.push_back({series_color(static_cast<int>(i)), policy_label(run.policy), true});
    }
    lines_[i]->replace(points);
  }
  legend()->setEntries(entries);
  const auto [x_max, x_ticks] = round_axis(static_cast<double>(steps));
  x_->setRange(0, x_max);
  x_->setTickCount(x_ticks);
  const auto [y_top, y_ticks] = metric_ == Metric::Stored ? std::pair{100.0, 5} : round_axis(y_max);
  y_->setRange(0, y_top);
  y_->setTickCount(y_ticks);
  setCurrentStep(step_);
}

void PagingUtilisationChart::setCurrentStep(std::int64_t step) {
  step_ = step;
  QList<QPointF> points;
  if (result_ != nullptr && step > 0) {
    const double x = static_cast<double>(step - 1);
    points = {QPointF(x, y_->min()), QPointF(x, y_->max())};
  }
  marker_->replace(points);
}

void PagingUtilisationChart::restyle() {
  ChartFrame::restyle();
  for (std::size_t i = 0; i < lines_.size(); ++i) {
    lines_[i]->setPen(QPen(series_color(static_cast<int>(i)), 1.6));
  }
  QColor mark = palette().color(QPalette::Text);
  mark.setAlphaF(0.55f);
  marker_->setPen(QPen(mark, 1, Qt::DashLine));
}

}  // namespace kvscope::ui
