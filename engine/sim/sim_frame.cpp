#include "sim/sim_frame.h"

#include <algorithm>

namespace kvscope {

std::vector<SimHole> sim_holes(const SimBlockMap& map) {
  std::vector<SimHole> holes;
  const bool waiting = map.head_need > 0;
  // A free run inside [0, usable): external only for a contiguous policy, when too small.
  const auto add_usable = [&](std::int64_t start, std::int64_t end) {
    if (end <= start) return;
    const std::int64_t size = end - start;
    holes.push_back({start, size, waiting && !map.paged && size < map.head_need});
  };
  std::int64_t at = 0;
  for (const SimSpan& s : map.spans) {
    add_usable(at, std::min(s.start, map.usable));
    at = std::max(at, s.start + s.size);
  }
  add_usable(at, map.usable);
  if (map.capacity > map.usable) {
    holes.push_back({map.usable, map.capacity - map.usable, waiting});
  }
  return holes;
}

}  // namespace kvscope
