// PanelHistory: the live panel's view model. It keeps the frames' numbers as chart points;
// every value is a CacheSnapshot or MemoryInfo field (or a ratio or running sum of them
// for display), nothing is estimated here.
//
//   waste over time   x = seconds since load, y = % of slots left empty:
//                     paged = snapshot.internal_fragmentation (empty slots of tail blocks),
//                     contiguous = contiguous.wasted_slots / contiguous.reserved_slots
//   memory by tokens  x = tokens in the cache (sum over live sequences), the latest frame
//                     seen at each token count: weights, KV in use, KV pool free,
//                     workspace, used by others, free (bytes)
#pragma once

#include <QList>
#include <QPointF>

#include <array>
#include <cstdint>
#include <map>

#include "worker/engine_messages.h"

namespace kvscope::ui {

enum MemoryPart { kWeights, kKvUsed, kKvFree, kWorkspace, kOthers, kFree, kMemoryParts };

class PanelHistory {
 public:
  static constexpr qsizetype kMaxTimePoints = 600;  // a minute at 10 frames a second

  void clear();
  void add(const PanelFrame& frame);

  const QList<QPointF>& pagedWaste() const { return paged_waste_; }
  const QList<QPointF>& contiguousWaste() const { return contiguous_waste_; }
  // The top edge of memory part `part` stacked on the parts before it, in `unit` bytes.
  QList<QPointF> memoryStack(int part, double unit) const;
  // The latest frame's bytes per part, and the device's total.
  const std::array<std::uint64_t, kMemoryParts>& latestMemory() const { return latest_; }
  std::uint64_t total() const { return total_; }
  bool empty() const { return paged_waste_.isEmpty(); }

 private:
  QList<QPointF> paged_waste_;
  QList<QPointF> contiguous_waste_;
  std::map<std::int64_t, std::array<std::uint64_t, kMemoryParts>> memory_;  // by tokens
  std::array<std::uint64_t, kMemoryParts> latest_{};
  std::uint64_t total_ = 0;
};

// Tokens of every live sequence in the snapshot, added up.
std::int64_t tokens_in_cache(const CacheSnapshot& cache);

}  // namespace kvscope::ui
