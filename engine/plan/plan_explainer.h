// The plan written out as formulas with the numbers filled in: weights, KV per token,
// blocks, workspace, budget, the verdict and the roofline. It is teaching material (the
// CLI's `plan` prints it, the "what fits" page shows it), so every line names what it
// multiplies and every number is the one the plan used.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "plan/memory_model.h"
#include "plan/solvers.h"

namespace kvscope {

// Multi-line text, each line ending in '\n'. The roofline section is included when given.
std::string explain_plan(const PlanRequest& request, const MemoryPlan& plan,
                         const std::optional<RooflineEstimate>& roofline = std::nullopt);

// What the request needs when no memory is given: weights, KV with its formula, workspace
// and their total (plan's budget fields are not shown; any budget serves to compute it).
std::string explain_needs(const PlanRequest& request, const MemoryPlan& plan);

}  // namespace kvscope
