#include "plan/parallel_solvers.h"

#include <algorithm>

#include "plan/last_true.h"
#include "util/error.h"

namespace kvscope {

namespace {

bool shape_allowed(const ModelSpec& spec, const ParallelShape& shape) {
  try {
    validate_parallel_shape(spec, shape);
    return true;
  } catch (const UsageError&) {
    return false;
  }
}

}  // namespace

std::int64_t parallel_max_context(const ParallelRequest& request) {
  ParallelRequest r = request;
  auto fits_at = [&](std::int64_t tokens) {
    r.base.context = tokens;
    return plan_parallel(r).fits;
  };
  return std::max<std::int64_t>(0, last_true(1, request.base.kv.max_context, fits_at));
}

std::int64_t parallel_max_batch(const ParallelRequest& request) {
  ParallelRequest r = request;
  auto fits_with = [&](std::int64_t batch) {
    r.base.batch = batch;
    return plan_parallel(r).fits;
  };
  return std::max<std::int64_t>(0, last_true(1, kMaxPlanBatch, fits_with));
}

std::optional<ParallelShape> smallest_node(const ParallelRequest& request) {
  const std::int64_t node = request.shape.node_gpus > 0 ? request.shape.node_gpus : kMaxNodeGpus;
  ParallelRequest r = request;
  for (std::int64_t gpus = 1; gpus <= node; ++gpus) {
    for (std::int64_t tp = gpus; tp >= 1; --tp) {
      if (gpus % tp != 0) continue;
      r.shape = {tp, gpus / tp, request.shape.node_gpus};
      if (shape_allowed(r.base.spec, r.shape) && plan_parallel(r).fits) return r.shape;
    }
  }
  return std::nullopt;
}

std::int64_t swap_bytes_per_gpu(const ParallelPlan& plan, std::int64_t n_sequences,
                                std::int64_t context) {
  if (n_sequences < 0 || context < 0) {
    throw_error<UsageError>("swap space: {} sequences of {} tokens (must be >= 0)", n_sequences,
                            context);
  }
  std::int64_t largest = 0;
  for (const StagePlan& s : plan.stages) {
    const std::int64_t blocks = kv_peak_blocks(s.request.kv, 0, context, 1);
    largest = std::max(largest, blocks * s.plan.kv_block_set_bytes);
  }
  return n_sequences * largest;
}

}  // namespace kvscope
