#include "backend/cuda_factory.h"

#include <algorithm>

#include <fmt/format.h>

#include "backend/cuda_device.h"
#include "run/layer_split.h"

namespace kvscope {

namespace {

// The GPU's layers the options ask for: a count (n_layers or more: all), "auto" resolved
// against the device's memory (run/layer_split.h), or all by default, unless the whole
// model's weights and workspace leave the GPU nothing for its KV cache: then as auto. 0
// with the reason when not one layer fits.
std::int64_t gpu_layers_for(const Model& model, const EngineOptions& options,
                            const CudaBackendOptions& cuda, std::string* why) {
  const std::int64_t n = model.spec().n_layers;
  if (options.gpu_layers >= 0) return std::min(options.gpu_layers, n);
  const bool all = options.gpu_layers == EngineOptions::kAllGpuLayers;
  if (all && options.kv_budget_bytes > 0) return n;  // a KV budget given: no device sizing
  const CudaDeviceInfo info = probe_cuda_device(cuda.device);
  if (!info.available) {
    if (why) *why = info.reason;
    return 0;
  }
  const MemoryBudget budget =
      gpu_memory_budget(options, info.total_bytes, info.total_bytes - info.free_bytes);
  // the workspace the backend will be planned with (CudaBackend::cuda_plan_options)
  const CudaWorkspaceOptions workspace = cuda_plan_workspace_options(cuda, info);
  if (all && gpu_side_kv_budget(model, options, budget, n, workspace) > 0) return n;
  const std::int64_t k = auto_gpu_layers(model, options, budget, workspace);
  if (k == 0 && why) {
    *why = fmt::format(
        "not one layer fits the GPU's memory budget ({} of {} bytes usable) with a context of {}",
        budget.usable(), budget.total_bytes, options.context_length);
  }
  return k;
}

}  // namespace

BackendFactory cuda_backend_factory(CudaBackendOptions base) {
  return [base](const Model& model, const EngineOptions& options,
                std::string* why) -> std::unique_ptr<Backend> {
    CudaBackendOptions cuda = base;
    cuda.context_length = options.context_length;
    const std::int64_t k = gpu_layers_for(model, options, cuda, why);
    if (k == 0) return nullptr;
    if (k < model.spec().n_layers) cuda.layers = {0, k};  // the CPU runs the rest
    return make_cuda_backend(model, cuda, why);
  };
}

}  // namespace kvscope
