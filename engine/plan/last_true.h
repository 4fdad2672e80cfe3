// Bisection for the planner's "largest that still fits" questions (longest context, largest
// batch), on one machine or a node.
#pragma once

#include <cstdint>

namespace kvscope {

// The largest batch a plan may ask about (plan_memory accepts up to this).
inline constexpr std::int64_t kMaxPlanBatch = std::int64_t{1} << 20;

// The largest x in [lo, hi] with ok(x), given ok is true up to some point and false after
// it; lo - 1 when ok(lo) is false. O(log(hi - lo)) calls of ok.
template <typename Ok>
std::int64_t last_true(std::int64_t lo, std::int64_t hi, Ok ok) {
  if (!ok(lo)) return lo - 1;
  while (lo < hi) {
    const std::int64_t mid = lo + (hi - lo + 1) / 2;
    if (ok(mid)) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  return lo;
}

}  // namespace kvscope
