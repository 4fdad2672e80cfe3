#include "sim/sim_summary.h"

#include <algorithm>

namespace kvscope {

double SimSummary::share(std::int64_t part) const {
  const std::int64_t all = taken();
  return all > 0 ? static_cast<double>(part) / static_cast<double>(all) : 0.0;
}

double SimSummary::mean_utilisation() const {
  const std::int64_t all = steps * capacity;
  return all > 0 ? static_cast<double>(stored) / static_cast<double>(all) : 0.0;
}

double SimSummary::mean_running() const {
  return steps > 0 ? static_cast<double>(running_steps) / static_cast<double>(steps) : 0.0;
}

double SimSummary::mean_wait() const {
  return admitted > 0 ? static_cast<double>(total_wait) / static_cast<double>(admitted) : 0.0;
}

void accumulate(SimSummary& s, const SimFrame& f) {
  ++s.steps;
  s.stored += f.stored;
  s.reserved += f.reserved;
  s.internal += f.internal;
  s.external += f.external;
  s.free += f.free;
  s.running_steps += f.running;
  s.peak_running = std::max(s.peak_running, f.running);
  s.admitted = f.admitted;
  s.finished = f.finished;
  s.preemptions = f.preemptions;
  s.recomputed = f.recomputed;
}

}  // namespace kvscope
