// The planner's answer for a model found on disk (model/discovery): on this GPU, at this
// context, does it fit, with which KV dtype, and how long a context could it reach; or how
// many bytes short is it. Every number comes from engine/plan's own functions (plan_memory,
// max_context, best_kv_dtype) on the request make_plan_request() builds, the one the
// engine sizes its cache with; nothing here is a second memory model.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "kv/format/kv_format.h"
#include "model/discovery/local_model.h"
#include "plan/memory_model.h"
#include "plan/solvers.h"

namespace kvscope {

struct LocalFitQuestion {
  std::int64_t memory_bytes = 0;  // the GPU's memory
  std::int64_t context = 0;       // tokens; 0 or past the model's limit: the model's limit
  std::optional<KvDtype> kv_dtype =
      std::nullopt;  // K and V in it; nullopt: the most precise that fits
  double utilisation = 0.90;
  PlanBackend backend = PlanBackend::Cuda;
  CudaWorkspaceOptions cuda = {};  // the GPU's (gpu_workspace_options of a preset)
};

struct LocalFitAnswer {
  std::string error;                // no answer: the entry is broken or the planner refused it
  std::int64_t context = 0;         // the context asked, limited to the model's
  KvDtype kv_dtype = KvDtype::F16;  // the dtype answered for (the asked one, else the
                                    // most precise that fits, else the most compact)
  bool fits = false;                // one sequence of `context` tokens fits with kv_dtype
  MaxContext max_context;           // longest context of one sequence with kv_dtype
  std::int64_t short_by_bytes = 0;  // when it does not fit: total needed - usable
  // When it does not fit whole on a GPU (CUDA): the most layers whose GPU side fits with
  // the rest on the CPU (plan_layer_split; 0: not one), of n_layers. Unset (0 of 0) else.
  std::int64_t gpu_layers = 0;
  std::int64_t n_layers = 0;
  bool ok() const { return error.empty(); }
};

// The request the answer is computed from: the model's spec and weights, K and V in
// `kv_dtype`, one sequence of the question's context on its memory.
PlanRequest local_fit_request(const LocalModel& model, const LocalFitQuestion& question,
                              KvDtype kv_dtype);

// Never throws: a broken entry or a request engine/plan rejects comes back with `error`.
LocalFitAnswer answer_local_fit(const LocalModel& model, const LocalFitQuestion& question);

// "fits 2,048 tokens, KV f16 (up to 8,192)", "fits with 24 of 40 layers on the GPU at 8,192
// tokens, KV f16 (short by 1.50 GiB whole)", "short by 1.50 GiB at 8,192 tokens, KV int4",
// "no answer: ...": one line, as the CLI prints it.
std::string describe_local_fit(const LocalFitAnswer& answer);

}  // namespace kvscope
