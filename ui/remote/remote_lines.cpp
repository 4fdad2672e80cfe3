#include "remote/remote_lines.h"

namespace kvscope::ui {

namespace {

using Field = std::optional<double> WatchPoint::*;

QList<QPointF> line(const WatchSeries& series, Field field, double scale = 1.0) {
  QList<QPointF> out;
  out.reserve(static_cast<qsizetype>(series.points().size()));
  for (const WatchPoint& p : series.points()) {
    if (const auto& v = p.*field) out.append({p.seconds, *v * scale});
  }
  return out;
}

}  // namespace

RemoteLines remote_lines(const WatchSeries& series, const PlannedPool* plan) {
  RemoteLines l;
  l.kv[0] = line(series, &WatchPoint::kv_usage_pct);
  if (plan != nullptr) {
    for (const WatchPoint& p : series.points()) {
      if (const auto pct = compare_kv(ServerSample{}, p.kv_tokens, *plan).planned_pct) {
        l.kv[1].append({p.seconds, *pct});
      }
    }
  }
  l.queue[0] = line(series, &WatchPoint::running);
  l.queue[1] = line(series, &WatchPoint::waiting);
  l.preemptions[0] = line(series, &WatchPoint::preemptions);
  l.prefix[0] = line(series, &WatchPoint::prefix_hit_pct);
  l.tokens[0] = line(series, &WatchPoint::generation_tokens_per_s);
  l.tokens[1] = line(series, &WatchPoint::prompt_tokens_per_s);
  l.ttft[0] = line(series, &WatchPoint::ttft_p50, 1000.0);
  l.ttft[1] = line(series, &WatchPoint::ttft_p90, 1000.0);
  l.ttft[2] = line(series, &WatchPoint::ttft_p99, 1000.0);
  return l;
}

}  // namespace kvscope::ui
