#include "demos/paging/summary.h"

#include <QHeaderView>

#include <array>

namespace kvscope::ui {
namespace {

struct RowInfo {
  const char* label;
  const char* tip;
};

constexpr std::array<RowInfo, PagingSummaryTable::RowCount> kRows = {{
    {"Used share",
     "Stored token slots / slots taken (stored + reserved + internal + external), "
     "summed over every step. vLLM's paper: 96.3% paged, 20.4-38.2% contiguous."},
    {"Reserved", "Share of the taken slots held for tokens a sequence will still generate."},
    {"Internal waste",
     "Share held but never filled: beyond the final length (reserve-max) or "
     "empty tail-block slots (paged)."},
    {"External waste", "Share free but in holes too small for the waiting request."},
    {"Admitted", "Requests admitted at least once."},
    {"Finished", "Requests served to their last token."},
    {"Peak running", "Most sequences holding memory in one step."},
    {"Mean running", "Sequences holding memory, averaged over the steps."},
    {"Steps to serve all", "Steps until the last request finished."},
    {"Preemptions", "Sequences preempted to let an older one grow (paged only)."},
    {"Mean wait (steps)", "Steps from arrival to first admission, averaged over the requests."},
}};

QString percent(double share) {
  return QStringLiteral("%1%").arg(100.0 * share, 0, 'f', 1);
}

}  // namespace

PagingSummaryTable::PagingSummaryTable(QWidget* parent)
    : QTableWidget(RowCount, static_cast<int>(kSimPolicies.size()), parent) {
  QStringList columns;
  for (const SimPolicy p : kSimPolicies) {
    columns << QString::fromLatin1(sim_policy_name(p).data(),
                                   static_cast<qsizetype>(sim_policy_name(p).size()));
  }
  setHorizontalHeaderLabels(columns);
  for (int r = 0; r < RowCount; ++r) {
    auto* header = new QTableWidgetItem(tr(kRows[static_cast<std::size_t>(r)].label));
    header->setToolTip(tr(kRows[static_cast<std::size_t>(r)].tip));
    setVerticalHeaderItem(r, header);
  }
  setEditTriggers(QAbstractItemView::NoEditTriggers);
  setSelectionMode(QAbstractItemView::NoSelection);
  setFocusPolicy(Qt::NoFocus);
  horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
  verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
  verticalHeader()->setDefaultSectionSize(fontMetrics().height() + 6);
  setResult(nullptr);
}

QSize PagingSummaryTable::sizeHint() const {
  const int h = horizontalHeader()->height() + RowCount * verticalHeader()->defaultSectionSize() +
                2 * frameWidth() + 2;
  return {420, h};
}

void PagingSummaryTable::setResult(const SimulationResult* result) {
  for (int c = 0; c < columnCount(); ++c) {
    const SimSummary* m = result != nullptr && static_cast<std::size_t>(c) < result->runs.size()
                              ? &result->runs[static_cast<std::size_t>(c)].summary
                              : nullptr;
    for (int r = 0; r < RowCount; ++r) {
      QVariant v;
      QString shown = QStringLiteral("\u2014");
      if (m != nullptr) {
        switch (static_cast<Row>(r)) {
          case UsedShare:
            v = m->used_share();
            break;
          case ReservedShare:
            v = m->reserved_share();
            break;
          case InternalShare:
            v = m->internal_share();
            break;
          case ExternalShare:
            v = m->external_share();
            break;
          case Admitted:
            v = qint64{m->admitted};
            break;
          case Finished:
            v = qint64{m->finished};
            break;
          case PeakRunning:
            v = qint64{m->peak_running};
            break;
          case MeanRunning:
            v = m->mean_running();
            break;
          case Steps:
            v = qint64{m->steps};
            break;
          case Preemptions:
            v = qint64{m->preemptions};
            break;
          case MeanWait:
            v = m->mean_wait();
            break;
          case RowCount:
            break;
        }
        if (r <= ExternalShare) {
          shown = percent(v.toDouble());
        } else if (r == MeanRunning || r == MeanWait) {
          shown = QString::number(v.toDouble(), 'f', 1);
        } else {
          shown = QString::number(v.toLongLong());
        }
      }
      auto* item = new QTableWidgetItem(shown);
      item->setData(Qt::UserRole, v);
      item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
      setItem(r, c, item);
    }
  }
}

QVariant PagingSummaryTable::value(Row row, int column) const {
  const QTableWidgetItem* i = item(row, column);
  return i != nullptr ? i->data(Qt::UserRole) : QVariant();
}

QString PagingSummaryTable::text(Row row, int column) const {
  const QTableWidgetItem* i = item(row, column);
  return i != nullptr ? i->text() : QString();
}

}  // namespace kvscope::ui
