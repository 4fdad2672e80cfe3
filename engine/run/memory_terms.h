// MemoryInfo as the panel snapshot lists it (kv/panel_snapshot_json.h): the terms in the
// order the live panel's memory chart stacks them, then the device's total.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kv/panel_snapshot_json.h"
#include "run/backend.h"
#include "run/split_backend.h"

namespace kvscope {

inline std::vector<std::pair<std::string, std::uint64_t>> memory_terms(const MemoryInfo& m) {
  return {{"weights", m.weights},     {"kv_pool", m.kv_pool},
          {"workspace", m.workspace}, {"used_by_others", m.used_by_others},
          {"free", m.free},           {"total", m.total}};
}

// The panel snapshot's device and memory terms: the backend's, or for a split (split given)
// its GPU's side in device / memory_bytes and its CPU's in the split's fields.
inline void set_memory_terms(PanelSnapshotContext& context, const MemoryInfo& memory,
                             const std::optional<SplitMemory>& split) {
  const MemoryInfo& main = split ? split->gpu : memory;
  context.device = main.device;
  context.memory_bytes = memory_terms(main);
  if (!split) return;
  context.gpu_layers = split->gpu_layers;
  context.n_layers = split->n_layers;
  context.cpu_device = split->cpu.device;
  context.cpu_memory_bytes = memory_terms(split->cpu);
}

}  // namespace kvscope
