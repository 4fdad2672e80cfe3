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
  r.cuda = in.cuda;
  return r;
}

LayerSplitRequest fits_split_request(const FitsInputs& in, const PlanRequest& request) {
  LayerSplitRequest r;
  r.plan = request;
  if (in.layer_bytes.empty()) {
    set_preset_layer_bytes(r, in.weight_type);
  } else {
    r.layer_bytes = in.layer_bytes;
    r.embedding_bytes = in.embedding_bytes;
    r.output_bytes = in.output_bytes;
  }
  r.gpu_layers = in.gpu_layers;
  r.gpu_bandwidth_gb_s = in.bandwidth_gb_s;
  r.cpu_bandwidth_gb_s = in.cpu_bandwidth_gb_s;
  return r;
}

namespace {

// A split answers "how much of it fits" on a GPU: asked for (fewer layers than all), or
// when the whole model does not fit.
bool wants_split(const FitsInputs& in, const MemoryPlan& plan) {
  if (in.backend != PlanBackend::Cuda || in.memory_bytes <= 0 || in.spec.n_layers <= 0) {
    return false;
  }
  return in.gpu_layers >= 0 ? in.gpu_layers < in.spec.n_layers : !plan.fits;
}

}  // namespace

FitsAnswers answer_fits(const FitsInputs& inputs) {
  FitsAnswers a;
  try {
    a.request = fits_request(inputs);
    a.plan = plan_memory(a.request);
    a.max_context = max_context(a.request);
    a.max_batch = max_batch(a.request);
    if (inputs.bandwidth_gb_s > 0.0) a.roofline = roofline_decode(a.request, inputs.bandwidth_gb_s);
    a.formula = explain_plan(a.request, a.plan, a.roofline);
    if (wants_split(inputs, a.plan))
      a.split = plan_layer_split(fits_split_request(inputs, a.request));
  } catch (const Error& e) {
    a.error = e.what();
  }
  return a;
}

}  // namespace kvscope
