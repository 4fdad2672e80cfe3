// The options the planner sizes a CudaBackend's workspace with (cuda_backend.h,
// plan/cuda_workspace.h): the same before the backend exists (the factory resolving
// --gpu-layers) and after (CudaBackend::cuda_plan_options, the engine sizing its pool).
#include <algorithm>

#include "backend/cuda_backend.h"
#include "backend/cuda_backend_state.h"
#include "util/env.h"

namespace kvscope {

bool q8_activations_on(const CudaBackendOptions& o) {
  return o.q8_activations && !env_turns_off("KVSCOPE_Q8_ACTIVATIONS");
}

CudaWorkspaceOptions cuda_plan_workspace_options(const CudaBackendOptions& o,
                                                 const CudaDeviceInfo& device) {
  CudaWorkspaceOptions w;
  w.gemm_min_tokens = std::max<std::int64_t>(0, o.gemm_min_tokens);
  w.q8_activations = q8_activations_on(o);
  w.gemm_slab_bytes = -1;  // the model's largest projection's (cuda_workspace.h)
  w.compute_major = device.compute_major;
  w.sm_count = device.sm_count;
  return w;
}

std::optional<CudaWorkspaceOptions> CudaBackend::cuda_plan_options() const {
  return s_->plan_options;
}

}  // namespace kvscope
