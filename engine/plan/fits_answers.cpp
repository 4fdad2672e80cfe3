#include "plan/fits_answers.h"

#include <utility>

#include "plan/plan_explainer.h"
#include "util/error.h"

namespace kvscope {

PlanRequest fits_request(const FitsInputs& in) {
  WeightFootprint weights =
      in.exact_weights ? *in.exact_weights : preset_weights(in.spec, in.n_params, in.weight_type);
  PlanRequest r =
      make_plan_request(in.spec, std::move(weights), in.k_dtype, in.v_dtype, in.block_size);
  r.batch = in.batch;
  r.context = in.context;
  r.backend = in.backend;
  r.budget.total_bytes = in.memory_bytes;
  r.budget.utilisation = in.utilisation;
  return r;
}

FitsAnswers answer_fits(const FitsInputs& inputs) {
  FitsAnswers a;
  try {
    a.request = fits_request(inputs);
    a.plan = plan_memory(a.request);
    a.max_context = max_context(a.request);
    a.max_batch = max_batch(a.request);
    if (inputs.bandwidth_gb_s > 0.0) a.roofline = roofline_decode(a.request, inputs.bandwidth_gb_s);
    a.formula = explain_plan(a.request, a.plan, a.roofline);
  } catch (const Error& e) {
    a.error = e.what();
  }
  return a;
}

}  // namespace kvscope
