#include "plan/local_model_fit.h"

#include <algorithm>

#include "plan/layer_split_plan.h"
#include "plan/units.h"
#include "util/error.h"

namespace kvscope {

namespace {

std::int64_t asked_context(const LocalModel& model, const LocalFitQuestion& question) {
  const std::int64_t limit = model.spec.context_length;
  return question.context <= 0 ? limit : std::min(question.context, limit);
}

WeightFootprint weights_of(const LocalModel& model) {
  WeightFootprint w;
  w.bytes = model.weight_bytes;
  w.read_per_token = model.weight_read_per_token;
  w.basis = "the stored tensors of " + model.path.string() + " (from its headers)";
  return w;
}

// The dtype to answer for: the asked one; else the most precise that fits; else int4, the
// one that comes closest (its shortfall is the least any dtype is short by).
KvDtype dtype_to_answer(const LocalModel& model, const LocalFitQuestion& question) {
  if (question.kv_dtype) return *question.kv_dtype;
  const auto best = best_kv_dtype(local_fit_request(model, question, KvDtype::F16));
  return best.value_or(KvDtype::Int4);
}

// A file's tensors are counted whole, not per layer: the token table (and an untied output
// head) at the file's average bytes per parameter, the rest shared evenly by the layers.
LayerSplitRequest estimated_split(const LocalModel& model, const PlanRequest& r) {
  LayerSplitRequest s;
  s.plan = r;
  set_even_layer_bytes(s, model.n_params > 0 ? static_cast<double>(model.weight_bytes) /
                                                   static_cast<double>(model.n_params)
                                             : 0.0);
  return s;
}

}  // namespace

PlanRequest local_fit_request(const LocalModel& model, const LocalFitQuestion& question,
                              KvDtype kv_dtype) {
  PlanRequest r = make_plan_request(model.spec, weights_of(model), kv_dtype, kv_dtype);
  r.batch = 1;
  r.context = asked_context(model, question);
  r.backend = question.backend;
  r.budget.total_bytes = question.memory_bytes;
  r.budget.utilisation = question.utilisation;
  r.cuda = question.cuda;
  return r;
}

LocalFitAnswer answer_local_fit(const LocalModel& model, const LocalFitQuestion& question) {
  LocalFitAnswer a;
  if (!model.ok()) {
    a.error = "unreadable: " + model.error;
    return a;
  }
  try {
    a.kv_dtype = dtype_to_answer(model, question);
    const PlanRequest r = local_fit_request(model, question, a.kv_dtype);
    const MemoryPlan plan = plan_memory(r);
    a.context = r.context;
    a.fits = plan.fits;
    a.max_context = max_context(r);
    a.short_by_bytes = plan.fits ? 0 : std::max<std::int64_t>(0, -plan.margin_bytes);
    if (!plan.fits && r.backend == PlanBackend::Cuda && r.budget.total_bytes > 0 &&
        model.spec.n_layers > 0 && plan.within_context) {
      a.gpu_layers = plan_layer_split(estimated_split(model, r)).gpu_layers;
      a.n_layers = model.spec.n_layers;
    }
  } catch (const Error& e) {
    a.error = e.what();
  }
  return a;
}

std::string describe_local_fit(const LocalFitAnswer& a) {
  if (!a.ok()) return "no answer: " + a.error;
  const std::string dtype(kv_dtype_name(a.kv_dtype));
  if (a.fits) {
    return fmt::format("fits {} tokens, KV {} (up to {})", group_digits(a.context), dtype,
                       group_digits(a.max_context.tokens));
  }
  if (a.gpu_layers > 0) {
    return fmt::format(
        "fits with {} of {} layers on the GPU at {} tokens, KV {} (short by {} "
        "whole)",
        a.gpu_layers, a.n_layers, group_digits(a.context), dtype, human_bytes(a.short_by_bytes));
  }
  return fmt::format("short by {} at {} tokens, KV {}", human_bytes(a.short_by_bytes),
                     group_digits(a.context), dtype);
}

}  // namespace kvscope
