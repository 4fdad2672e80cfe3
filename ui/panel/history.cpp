#include "panel/history.h"

namespace kvscope::ui {

std::int64_t tokens_in_cache(const CacheSnapshot& cache) {
  std::int64_t n = 0;
  for (const SequenceSnapshot& s : cache.sequences) n += s.n_tokens;
  return n;
}

void PanelHistory::clear() {
  paged_waste_.clear();
  contiguous_waste_.clear();
  memory_.clear();
  latest_ = {};
  total_ = 0;
}

void PanelHistory::add(const PanelFrame& frame) {
  const CacheSnapshot& c = frame.cache;
  paged_waste_.append({frame.seconds, 100.0 * c.internal_fragmentation});
  contiguous_waste_.append({frame.seconds, 100.0 * c.contiguous.waste_fraction()});
  if (paged_waste_.size() > kMaxTimePoints) {
    paged_waste_.removeFirst();
    contiguous_waste_.removeFirst();
  }
  const MemoryInfo& m = frame.memory;
  const auto used = static_cast<std::uint64_t>(c.used_bytes);
  latest_[kWeights] = m.weights;
  latest_[kKvUsed] = used;
  latest_[kKvFree] = m.kv_pool > used ? m.kv_pool - used : 0;
  latest_[kWorkspace] = m.workspace;
  latest_[kOthers] = m.used_by_others;
  latest_[kFree] = m.free;
  total_ = m.total;
  memory_[tokens_in_cache(c)] = latest_;
}

QList<QPointF> PanelHistory::memoryStack(int part, double unit) const {
  QList<QPointF> points;
  points.reserve(static_cast<qsizetype>(memory_.size()));
  for (const auto& [tokens, parts] : memory_) {
    std::uint64_t top = 0;
    for (int p = 0; p <= part; ++p) top += parts[static_cast<std::size_t>(p)];
    points.append({static_cast<double>(tokens), static_cast<double>(top) / unit});
  }
  return points;
}

}  // namespace kvscope::ui
