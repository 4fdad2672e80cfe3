#include "sim/simulation.h"

#include <algorithm>
#include <stdexcept>

namespace kvscope {

const PolicyRun& SimulationResult::run(SimPolicy policy) const {
  for (const PolicyRun& r : runs) {
    if (r.policy == policy) return r;
  }
  throw std::logic_error("simulation result: policy not run");
}

std::int64_t SimulationResult::max_steps() const {
  std::int64_t steps = 0;
  for (const PolicyRun& r : runs) steps = std::max(steps, r.summary.steps);
  return steps;
}

PolicyRun run_policy(SimPolicy policy, const std::vector<SimRequest>& trace,
                     const SimConfig& config) {
  PolicySimulation sim(policy, trace, config);
  PolicyRun run;
  run.policy = policy;
  while (!sim.done()) run.frames.push_back(sim.step());
  run.summary = sim.summary();
  return run;
}

SimulationResult run_simulation(std::vector<SimRequest> trace, const SimConfig& config) {
  SimulationResult result;
  result.config = config;
  for (const SimPolicy p : kSimPolicies) result.runs.push_back(run_policy(p, trace, config));
  result.trace = std::move(trace);
  return result;
}

}  // namespace kvscope
