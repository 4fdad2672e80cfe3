#include "demos/paging/summary.h"

#include <QHeaderView>

#include <array>

#include "demos/paging/names.h"

namespace kvscope::ui {
namespace {

// Row names and tips, translated where the table shows them (tr()).
struct RowInfo {
  const char* label;
  const char* tip;
};

constexpr std::array<RowInfo, PagingSummaryTable::RowCount> kRows = {{
    {QT_TRANSLATE_NOOP("kvscope::ui::PagingSummaryTable", "Used share"),
     QT_TRANSLATE_NOOP(
         "kvscope::ui::PagingSummaryTable",
         "Stored token slots / slots taken (stored + reserved + internal + external), "
         "summed over every step. vLLM's paper: 96.3% paged, 20.4-38.2% contiguous.")},
    {QT_TRANSLATE_NOOP("kvscope::ui::PagingSummaryTable", "Reserved"),
     QT_TRANSLATE_NOOP("kvscope::ui::PagingSummaryTable",
                       "Share of the taken slots held for tokens a sequence will still generate.")},
    {QT_TRANSLATE_NOOP("kvscope::ui::PagingSummaryTable", "Internal waste"),
     QT_TRANSLATE_NOOP("kvscope::ui::PagingSummaryTable",
                       "Share held but never filled: beyond the final length (reserve-max) or "
                       "empty tail-block slots (paged).")},
    {QT_TRANSLATE_NOOP("kvscope::ui::PagingSummaryTable", "External waste"),
     QT_TRANSLATE_NOOP("kvscope::ui::PagingSummaryTable",
                       "Share free but in holes too small for the waiting request.")},
    {QT_TRANSLATE_NOOP("kvscope::ui::PagingSummaryTable", "Admitted"),
     QT_TRANSLATE_NOOP("kvscope::ui::PagingSummaryTable", "Requests admitted at least once.")},
    {QT_TRANSLATE_NOOP("kvscope::ui::PagingSummaryTable", "Finished"),
     QT_TRANSLATE_NOOP("kvscope::ui::PagingSummaryTable", "Requests served to their last token.")},
    {QT_TRANSLATE_NOOP("kvscope::ui::PagingSummaryTable", "Peak running"),
     QT_TRANSLATE_NOOP("kvscope::ui::PagingSummaryTable",
                       "Most sequences holding memory in one step.")},
    {QT_TRANSLATE_NOOP("kvscope::ui::PagingSummaryTable", "Mean running"),
     QT_TRANSLATE_NOOP("kvscope::ui::PagingSummaryTable",
                       "Sequences holding memory, averaged over the steps.")},
    {QT_TRANSLATE_NOOP("kvscope::ui::PagingSummaryTable", "Steps to serve all"),
     QT_TRANSLATE_NOOP("kvscope::ui::PagingSummaryTable",
                       "Steps until the last request finished.")},
    {QT_TRANSLATE_NOOP("kvscope::ui::PagingSummaryTable", "Preemptions"),
     QT_TRANSLATE_NOOP("kvscope::ui::PagingSummaryTable",
                       "Sequences preempted to let an older one grow (paged only).")},
    {QT_TRANSLATE_NOOP("kvscope::ui::PagingSummaryTable", "Mean wait (steps)"),
     QT_TRANSLATE_NOOP("kvscope::ui::PagingSummaryTable",
                       "Steps from arrival to first admission, averaged over the requests.")},
}};

QString percent(double share) {
  return QStringLiteral("%1%").arg(100.0 * share, 0, 'f', 1);
}

}  // namespace

PagingSummaryTable::PagingSummaryTable(QWidget* parent)
    : QTableWidget(RowCount, static_cast<int>(kSimPolicies.size()), parent) {
  QStringList columns;
  for (const SimPolicy p : kSimPolicies) {
    columns << policy_label(p);
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
