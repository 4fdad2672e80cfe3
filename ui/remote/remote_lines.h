// RemoteLines: the Remote page's view model. A WatchSeries' points as chart lines, x in
// seconds since connecting; a point the server did not report is left out (no fake zeros).
//   kv        live KV usage (%), and the planner's: tokens held / planned pool tokens (%), as
//             engine/remote's compare_kv reads them
//   queue     running, waiting
//   preempt   the preemption counter
//   prefix    prefix-cache hit rate over the window (%)
//   tokens    generated and prompt tokens per second
//   ttft      TTFT p50, p90, p99 over the window (ms)
#pragma once

#include <QList>
#include <QPointF>
#include <QVector>

#include <cstdint>

#include "remote/kv_prediction.h"
#include "remote/watch_series.h"

namespace kvscope::ui {

struct RemoteLines {
  QVector<QList<QPointF>> kv{2};
  QVector<QList<QPointF>> queue{2};
  QVector<QList<QPointF>> preemptions{1};
  QVector<QList<QPointF>> prefix{1};
  QVector<QList<QPointF>> tokens{2};
  QVector<QList<QPointF>> ttft{3};
};

// `plan` null (or an empty pool): no planner line.
RemoteLines remote_lines(const WatchSeries& series, const PlannedPool* plan);

}  // namespace kvscope::ui
