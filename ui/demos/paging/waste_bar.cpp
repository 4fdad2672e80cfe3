#include "demos/paging/waste_bar.h"

#include <QBarCategoryAxis>
#include <QBarSet>
#include <QChart>
#include <QHorizontalStackedBarSeries>
#include <QValueAxis>

#include "demos/paging/names.h"
#include "widgets/chart_legend.h"
#include "widgets/chart_style.h"

namespace kvscope::ui {
namespace {

// Stored in green, reserved blue, internal grey, external red (chart_style's palette).
constexpr std::array<int, 4> kPartColor = {2, 0, 5, 4};

}  // namespace

PagingWasteBar::PagingWasteBar(QWidget* parent)
    : ChartFrame(parent), series_(new QHorizontalStackedBarSeries) {
  const std::array<QString, 4> names = {tr("stored tokens"), tr("reserved"), tr("internal"),
                                        tr("external")};
  QVector<LegendEntry> entries;
  for (std::size_t i = 0; i < sets_.size(); ++i) {
    sets_[i] = new QBarSet(names[i]);
    series_->append(sets_[i]);
    entries.push_back({series_color(kPartColor[i]), names[i], false});
  }
  legend()->setEntries(entries);
  series_->setBarWidth(0.6);
  QChart* c = chart();
  c->setTitle(tr("Memory taken over the run (%)"));
  c->addSeries(series_);
  auto* categories = new QBarCategoryAxis;
  for (const SimPolicy p : kSimPolicies) {
    categories->append(policy_label(p));
  }
  auto* value = new QValueAxis;
  value->setRange(0, 100);
  value->setTickCount(6);
  value->setLabelFormat(QStringLiteral("%.0f"));
  c->addAxis(categories, Qt::AlignLeft);
  c->addAxis(value, Qt::AlignBottom);
  series_->attachAxis(categories);
  series_->attachAxis(value);
  restyle();
}

void PagingWasteBar::setResult(const SimulationResult* result) {
  for (QBarSet* s : sets_) s->remove(0, s->count());
  if (result == nullptr) return;
  for (const PolicyRun& run : result->runs) {
    const SimSummary& m = run.summary;
    sets_[0]->append(100.0 * m.used_share());
    sets_[1]->append(100.0 * m.reserved_share());
    sets_[2]->append(100.0 * m.internal_share());
    sets_[3]->append(100.0 * m.external_share());
  }
}

void PagingWasteBar::restyle() {
  ChartFrame::restyle();
  chart()->setMargins(QMargins(2, 2, 12, 2));  // room for the last axis label, "100"
  for (std::size_t i = 0; i < sets_.size(); ++i) {
    const QColor c = series_color(kPartColor[i]);
    sets_[i]->setColor(c);
    sets_[i]->setBorderColor(c);
  }
}

}  // namespace kvscope::ui
