// The paged-vs-contiguous comparison: the same trace through every policy, to the end.
// Frames are kept for charts (a few dozen bytes each); block maps are not, a
// PolicySimulation stepped to the wanted step gives one.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/policy_simulation.h"
#include "sim/sim_config.h"
#include "sim/sim_frame.h"
#include "sim/sim_summary.h"
#include "sim/trace/request_trace.h"

namespace kvscope {

struct PolicyRun {
  SimPolicy policy = SimPolicy::Paged;
  std::vector<SimFrame> frames;  // [steps], frames[i].step == i
  SimSummary summary;
};

struct SimulationResult {
  SimConfig config;
  std::vector<SimRequest> trace;
  std::vector<PolicyRun> runs;  // one per kSimPolicies entry, in that order

  const PolicyRun& run(SimPolicy policy) const;
  // The most steps any policy took.
  std::int64_t max_steps() const;
};

// One policy to the end (UsageError for a bad config or trace).
PolicyRun run_policy(SimPolicy policy, const std::vector<SimRequest>& trace,
                     const SimConfig& config);

// Every policy to the end.
SimulationResult run_simulation(std::vector<SimRequest> trace, const SimConfig& config);

}  // namespace kvscope
