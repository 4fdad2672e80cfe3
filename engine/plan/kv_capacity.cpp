#include "plan/kv_capacity.h"

#include <algorithm>

#include "plan/kv_curves.h"
#include "plan/memory_model.h"
#include "plan/solvers.h"

namespace kvscope {

namespace {

constexpr std::int64_t kPlannerMaxTokens = std::int64_t{1} << 30;  // plan_memory's context limit

}  // namespace

KvCapacity kv_capacity(const ModelSpec& spec, std::int64_t n_kv_heads, KvDtype dtype,
                       std::int64_t kv_budget_bytes) {
  KvCapacity c;
  c.n_kv_heads = n_kv_heads;
  c.bytes_per_token_per_layer = kv_bytes_per_token_per_layer(dtype, n_kv_heads, spec.head_dim);
  // Only the KV pool is asked about: weights and workspace are not part of the question.
  PlanRequest request = make_plan_request(spec, WeightFootprint{}, dtype, dtype);
  request.kv = kv_variant(request, n_kv_heads, dtype, dtype);
  request.batch = 1;
  request.context = spec.context_length;
  request.kv_budget_bytes = std::max<std::int64_t>(1, kv_budget_bytes);
  const MemoryPlan at_full = plan_memory(request);
  c.bytes_per_token = at_full.kv_bytes_per_token;
  c.full_context_bytes = at_full.kv.held_bytes;
  if (kv_budget_bytes < 1) return c;
  request.kv.max_context = kPlannerMaxTokens;
  const MaxContext longest = max_context(request);
  c.context_tokens = longest.tokens;
  c.at_planner_limit = longest.limited_by_max_context;
  return c;
}

}  // namespace kvscope
