// A node plan written out per GPU with its formulas (the CLI's `plan --tp/--pp` prints it):
// the split (KV heads per rank, layers per stage), then for one GPU of each pipeline stage
// its weights, KV pool and workspace against its budget, then the node's KV capacity.
#pragma once

#include <string>

#include "plan/parallel_plan.h"

namespace kvscope {

// Multi-line text, each line ending in '\n'.
std::string explain_parallel(const ParallelRequest& request, const ParallelPlan& plan);

}  // namespace kvscope
