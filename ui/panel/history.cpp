#include "panel/history.h"

#include "panel/split_sides.h"

namespace kvscope::ui {
namespace {

// The parts of one memory: its MemoryInfo, and the KV bytes in use of the groups it holds.
void add_memory(MemoryStack& stack, std::int64_t tokens, const MemoryInfo& m,
                std::uint64_t kv_used) {
  auto& parts = stack.latest;
  parts[kWeights] = m.weights;
  parts[kKvUsed] = kv_used;
  parts[kKvFree] = m.kv_pool > kv_used ? m.kv_pool - kv_used : 0;
  parts[kWorkspace] = m.workspace;
  parts[kOthers] = m.used_by_others;
  parts[kFree] = m.free;
  stack.total = m.total;
  stack.by_tokens[tokens] = parts;
}

}  // namespace

std::int64_t tokens_in_cache(const CacheSnapshot& cache) {
  std::int64_t n = 0;
  for (const SequenceSnapshot& s : cache.sequences) n += s.n_tokens;
  return n;
}

void PanelHistory::clear() {
  paged_waste_.clear();
  contiguous_waste_.clear();
  memory_ = {};
  split_.reset();
}

void PanelHistory::add(const PanelFrame& frame) {
  const CacheSnapshot& c = frame.cache;
  paged_waste_.append({frame.seconds, 100.0 * c.internal_fragmentation});
  contiguous_waste_.append({frame.seconds, 100.0 * c.contiguous.waste_fraction()});
  if (paged_waste_.size() > kMaxTimePoints) {
    paged_waste_.removeFirst();
    contiguous_waste_.removeFirst();
  }
  const std::int64_t tokens = tokens_in_cache(c);
  split_ = frame.split;
  if (!split_) {
    add_memory(memory_[kDeviceMemory], tokens, frame.memory,
               static_cast<std::uint64_t>(c.used_bytes));
    return;
  }
  const std::int64_t k = split_->gpu_layers;
  add_memory(memory_[kDeviceMemory], tokens, split_->gpu,
             static_cast<std::uint64_t>(side_used_bytes(c, SplitSide::Gpu, k)));
  add_memory(memory_[kSplitRam], tokens, split_->cpu,
             static_cast<std::uint64_t>(side_used_bytes(c, SplitSide::Cpu, k)));
}

QList<QPointF> PanelHistory::memoryStack(int part, double unit, MemorySide side) const {
  const auto& by_tokens = memory_[side].by_tokens;
  QList<QPointF> points;
  points.reserve(static_cast<qsizetype>(by_tokens.size()));
  for (const auto& [tokens, parts] : by_tokens) {
    std::uint64_t top = 0;
    for (int p = 0; p <= part; ++p) top += parts[static_cast<std::size_t>(p)];
    points.append({static_cast<double>(tokens), static_cast<double>(top) / unit});
  }
  return points;
}

}  // namespace kvscope::ui
