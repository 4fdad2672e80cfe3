// PagingPlayback: the three policies of the paged-vs-contiguous demo stepped together, so
// the block map can show the memory at the current step. A finished run
// (SimulationResult) keeps only frames; the memory layout at a step comes from stepping
// PolicySimulations over the same trace and config, which give the same frames. Seeking
// back starts over (a few milliseconds for the preset traces).
#pragma once

#include <cstdint>
#include <vector>

#include "sim/policy_simulation.h"
#include "sim/sim_config.h"
#include "sim/sim_frame.h"
#include "sim/trace/request_trace.h"

namespace kvscope {

class PagingPlayback {
 public:
  // Starts over at step 0 (before the first step) with every policy of kSimPolicies.
  void reset(const std::vector<SimRequest>& trace, const SimConfig& config);
  void clear();

  bool empty() const { return sims_.empty(); }
  // Steps played so far: the maps show the frame of step() - 1.
  std::int64_t step() const { return step_; }
  // Whether every policy has served every request.
  bool finished() const;
  // Plays n more steps; a policy that is done stays on its last frame.
  void advance(std::int64_t n);
  // Plays to `step` (from the start when it lies behind).
  void seek(std::int64_t step);

  // The memory of each policy, kSimPolicies order (empty maps before the first step).
  std::vector<SimBlockMap> maps() const;
  // Whether policy i (kSimPolicies order) has finished.
  bool done(std::size_t i) const { return sims_[i].done(); }

 private:
  std::vector<SimRequest> trace_;
  SimConfig config_;
  std::vector<PolicySimulation> sims_;
  std::int64_t step_ = 0;
};

}  // namespace kvscope
