// PanelHistory: the live panel's view model. It keeps the frames' numbers as chart points;
// every value is a CacheSnapshot or MemoryInfo field (or a ratio or running sum of them
// for display), nothing is estimated here.
//
//   waste over time   x = seconds since load, y = % of slots left empty:
//                     paged = snapshot.internal_fragmentation (empty slots of tail blocks),
//                     contiguous = contiguous.wasted_slots / contiguous.reserved_slots
//   memory by tokens  x = tokens in the cache (sum over live sequences), the latest frame
//                     seen at each token count: weights, KV in use, KV pool free,
//                     workspace, used by others, free (bytes). One stack per memory: the
//                     device's (MemoryInfo), or for a model split between GPU and CPU one
//                     for VRAM (SplitMemory::gpu, the GPU groups' KV) and one for RAM
//                     (SplitMemory::cpu, the CPU groups' KV).
#pragma once

#include <QList>
#include <QPointF>

#include <array>
#include <cstdint>
#include <map>
#include <optional>

#include "worker/engine_messages.h"

namespace kvscope::ui {

enum MemoryPart { kWeights, kKvUsed, kKvFree, kWorkspace, kOthers, kFree, kMemoryParts };
// Which memory a stack is of: the device's (a split's VRAM), or a split's RAM.
enum MemorySide { kDeviceMemory, kSplitRam, kMemorySides };

// One memory's parts by tokens in the cache.
struct MemoryStack {
  std::map<std::int64_t, std::array<std::uint64_t, kMemoryParts>> by_tokens;
  std::array<std::uint64_t, kMemoryParts> latest{};
  std::uint64_t total = 0;
};

class PanelHistory {
 public:
  static constexpr qsizetype kMaxTimePoints = 600;  // a minute at 10 frames a second

  void clear();
  void add(const PanelFrame& frame);

  const QList<QPointF>& pagedWaste() const { return paged_waste_; }
  const QList<QPointF>& contiguousWaste() const { return contiguous_waste_; }
  // The top edge of memory part `part` stacked on the parts before it, in `unit` bytes.
  QList<QPointF> memoryStack(int part, double unit, MemorySide side = kDeviceMemory) const;
  // The latest frame's bytes per part, and the memory's total.
  const std::array<std::uint64_t, kMemoryParts>& latestMemory(
      MemorySide side = kDeviceMemory) const {
    return memory_[side].latest;
  }
  std::uint64_t total(MemorySide side = kDeviceMemory) const { return memory_[side].total; }
  // The latest frame's split (nullopt: the model runs on one backend, kSplitRam is empty).
  const std::optional<SplitMemory>& split() const { return split_; }
  bool empty() const { return paged_waste_.isEmpty(); }

 private:
  QList<QPointF> paged_waste_;
  QList<QPointF> contiguous_waste_;
  std::array<MemoryStack, kMemorySides> memory_;
  std::optional<SplitMemory> split_;
};

// Tokens of every live sequence in the snapshot, added up.
std::int64_t tokens_in_cache(const CacheSnapshot& cache);

}  // namespace kvscope::ui
