// FitsInputs / FitsAnswers: what the "What fits" page asks and what it shows, both plain
// values. answer_fits() turns one choice of every control into an engine/plan request and
// asks engine/plan every question the page answers (plan_memory, max_context, max_batch,
// roofline_decode, explain_plan, and plan_layer_split for a model larger than the GPU); the
// page only formats the results. No formula lives here: every number is one engine/plan
// returned.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kv/format/kv_format.h"
#include "model/model_spec.h"
#include "plan/layer_split_plan.h"
#include "plan/memory_model.h"
#include "plan/solvers.h"
#include "plan/weight_footprint.h"

namespace kvscope {

struct FitsInputs {
  ModelSpec spec;
  // A preset's weights are estimated from n_params and weight_type (preset_weights); a
  // loaded model's are its exact stored bytes, given here.
  std::int64_t n_params = 0;
  WeightType weight_type = WeightType::Q4_K_M;
  std::optional<WeightFootprint> exact_weights;
  KvDtype k_dtype = KvDtype::F16;
  KvDtype v_dtype = KvDtype::F16;
  std::int64_t block_size = 16;
  std::int64_t batch = 1;
  std::int64_t context = 1;
  PlanBackend backend = PlanBackend::Cuda;
  std::int64_t memory_bytes = 0;   // the GPU's memory
  CudaWorkspaceOptions cuda = {};  // its CUDA workspace (gpu_workspace_options of a preset)
  double utilisation = 0.90;
  double bandwidth_gb_s = 0.0;  // 0: no roofline estimate
  // Layers on the GPU when the model does not fit whole (llama.cpp's -ngl): -1 the most
  // that fit, else this many. The CPU side's bandwidth gives the split's roofline (0: none).
  std::int64_t gpu_layers = -1;
  double cpu_bandwidth_gb_s = 0.0;
  // A loaded model's stored bytes per layer, token table and untied output head (empty:
  // estimated from the weight type, set_preset_layer_bytes).
  std::vector<std::int64_t> layer_bytes;
  std::int64_t embedding_bytes = 0;
  std::int64_t output_bytes = 0;
};

// The engine/plan request for `inputs`: make_plan_request() with the model's default cache,
// then batch, context, backend and budget.
PlanRequest fits_request(const FitsInputs& inputs);

struct FitsAnswers {
  PlanRequest request;
  MemoryPlan plan;
  MaxContext max_context;      // at request.batch
  std::int64_t max_batch = 0;  // at request.context
  std::optional<RooflineEstimate> roofline;
  // The layers split between the GPU and the CPU: on the CUDA backend when the whole model
  // does not fit or a layer count below all of them is asked for; nullopt otherwise.
  std::optional<LayerSplitPlan> split;
  std::string formula;  // explain_plan()
  std::string error;    // non-empty: engine/plan rejected the request (UsageError)
  bool ok() const { return error.empty(); }
};

// The split request for `inputs` and its plan request (layer bytes exact or estimated).
LayerSplitRequest fits_split_request(const FitsInputs& inputs, const PlanRequest& request);

// Never throws: a request engine/plan rejects comes back with `error` set.
FitsAnswers answer_fits(const FitsInputs& inputs);

}  // namespace kvscope
