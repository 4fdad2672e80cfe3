#include "sim/scenarios/paging_playback.h"

#include <algorithm>

namespace kvscope {

void PagingPlayback::reset(const std::vector<SimRequest>& trace, const SimConfig& config) {
  trace_ = trace;
  config_ = config;
  sims_.clear();
  for (const SimPolicy p : kSimPolicies) sims_.emplace_back(p, trace_, config_);
  step_ = 0;
}

void PagingPlayback::clear() {
  trace_.clear();
  sims_.clear();
  step_ = 0;
}

bool PagingPlayback::finished() const {
  return std::all_of(sims_.begin(), sims_.end(),
                     [](const PolicySimulation& s) { return s.done(); });
}

void PagingPlayback::advance(std::int64_t n) {
  for (std::int64_t i = 0; i < n && !finished(); ++i) {
    for (PolicySimulation& s : sims_) {
      if (!s.done()) s.step();
    }
    ++step_;
  }
}

void PagingPlayback::seek(std::int64_t step) {
  if (sims_.empty()) return;
  if (step < step_) reset(trace_, config_);
  advance(step - step_);
}

std::vector<SimBlockMap> PagingPlayback::maps() const {
  std::vector<SimBlockMap> out;
  out.reserve(sims_.size());
  for (const PolicySimulation& s : sims_) out.push_back(s.block_map());
  return out;
}

}  // namespace kvscope
