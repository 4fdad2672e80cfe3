#include "plan/solvers.h"

#include <algorithm>
#include <cmath>
#include <initializer_list>

#include "plan/last_true.h"
#include "util/error.h"

namespace kvscope {

MaxContext max_context(const PlanRequest& request) {
  PlanRequest r = request;
  auto fits_at = [&](std::int64_t tokens) {
    r.context = tokens;
    return plan_memory(r).fits;
  };
  MaxContext m;
  m.tokens = std::max<std::int64_t>(0, last_true(1, request.kv.max_context, fits_at));
  m.limited_by_max_context = m.tokens == request.kv.max_context;
  return m;
}

std::int64_t max_batch(const PlanRequest& request) {
  PlanRequest r = request;
  auto fits_with = [&](std::int64_t batch) {
    r.batch = batch;
    return plan_memory(r).fits;
  };
  return std::max<std::int64_t>(0, last_true(1, kMaxPlanBatch, fits_with));
}

const GpuPreset* smallest_gpu(const PlanRequest& request, const std::vector<GpuPreset>& gpus) {
  std::vector<const GpuPreset*> order;
  for (const GpuPreset& g : gpus) order.push_back(&g);
  std::stable_sort(order.begin(), order.end(), [](const GpuPreset* a, const GpuPreset* b) {
    return a->memory_bytes < b->memory_bytes;
  });
  PlanRequest r = request;
  r.kv_budget_bytes = 0;
  for (const GpuPreset* g : order) {
    r.budget.total_bytes = g->memory_bytes;
    r.cuda = gpu_workspace_options(*g);  // its own cuBLAS workspace and SMs
    if (plan_memory(r).fits) return g;
  }
  return nullptr;
}

namespace {

// The first of `ladder` (most precise first) with which every group's K and V fit.
std::optional<KvDtypes> first_that_fits(const PlanRequest& request,
                                        std::initializer_list<KvDtypes> ladder) {
  PlanRequest r = request;
  for (const KvDtypes d : ladder) {
    for (LayerGroupConfig& g : r.kv.groups) g.k_dtype = d.k, g.v_dtype = d.v;
    if (plan_memory(r).fits) return d;
  }
  return std::nullopt;
}

}  // namespace

std::optional<KvDtype> best_kv_dtype(const PlanRequest& request) {
  const auto best = first_that_fits(request, {{KvDtype::F16, KvDtype::F16},
                                              {KvDtype::Int8, KvDtype::Int8},
                                              {KvDtype::Int4, KvDtype::Int4}});
  return best ? std::optional<KvDtype>(best->k) : std::nullopt;
}

std::optional<KvDtypes> best_kv_dtypes(const PlanRequest& request) {
  return first_that_fits(request, {{KvDtype::F16, KvDtype::F16},
                                   {KvDtype::Int8, KvDtype::Int8},
                                   {KvDtype::Int8, KvDtype::Int4},
                                   {KvDtype::Int4, KvDtype::Int4}});
}

RooflineEstimate roofline_decode(const PlanRequest& request, double bandwidth_gb_s) {
  if (!std::isfinite(bandwidth_gb_s) || bandwidth_gb_s <= 0.0) {
    throw_error<UsageError>("roofline: memory bandwidth {} GB/s must be positive", bandwidth_gb_s);
  }
  if (request.batch < 1 || request.context < 1) {
    throw_error<UsageError>("roofline: batch {} and context {} must be >= 1", request.batch,
                            request.context);
  }
  RooflineEstimate e;
  e.bandwidth_gb_s = bandwidth_gb_s;
  e.weight_bytes_read = request.weights.read_per_token;
  e.kv_bytes_read = request.batch * kv_bytes_read_per_token(request.kv, request.context);
  e.bytes_per_step = e.weight_bytes_read + e.kv_bytes_read;
  if (e.bytes_per_step <= 0) return e;
  const double steps_per_s = bandwidth_gb_s * 1e9 / static_cast<double>(e.bytes_per_step);
  e.tokens_per_s_per_sequence = steps_per_s;
  e.tokens_per_s = steps_per_s * static_cast<double>(request.batch);
  return e;
}

}  // namespace kvscope
