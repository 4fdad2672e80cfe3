// MemoryInfo as the panel snapshot lists it (kv/panel_snapshot_json.h): the terms in the
// order the live panel's memory chart stacks them, then the device's total.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "run/backend.h"

namespace kvscope {

inline std::vector<std::pair<std::string, std::uint64_t>> memory_terms(const MemoryInfo& m) {
  return {{"weights", m.weights},     {"kv_pool", m.kv_pool},
          {"workspace", m.workspace}, {"used_by_others", m.used_by_others},
          {"free", m.free},           {"total", m.total}};
}

}  // namespace kvscope
