// What the split tests (run/split_backend.h) share: engine options for k layers on the GPU,
// and a memory budget under which exactly k of a model's layers fit.
#pragma once

#include <cstdint>

#include "backend/cuda_factory.h"
#include "model/model.h"
#include "plan/layer_split_plan.h"
#include "run/engine.h"
#include "run/layer_split.h"

namespace kvscope::test {

// k layers on the CUDA backend (0: the CPU alone), one thread, 128 tokens, a 16 MiB KV budget.
inline EngineOptions split_options(std::int64_t gpu_layers) {
  EngineOptions o;
  o.backend = gpu_layers == 0 ? BackendChoice::Cpu : BackendChoice::Cuda;
  o.gpu_layers = gpu_layers;
  o.n_threads = 1;
  o.context_length = 128;
  o.kv_budget_bytes = std::uint64_t{16} << 20;
  o.cuda_factory = cuda_backend_factory(CudaBackendOptions{});
  return o;
}

// The CUDA workspace options the planner sizes the default backend on this device with (the
// emulation's, or the GPU's), as the factory does (cuda_plan_workspace_options).
inline CudaWorkspaceOptions device_plan_options() {
  return cuda_plan_workspace_options(CudaBackendOptions{}, probe_cuda_device());
}

// A memory budget (EngineOptions::memory_budget_bytes) whose usable share is half a layer's
// weights more than the GPU's side of k layers takes (plan_layer_split): auto puts exactly k
// layers on the GPU, with options' context.
inline std::uint64_t budget_for_gpu_layers(const Model& model, const EngineOptions& options,
                                           std::int64_t k) {
  LayerSplitRequest r =
      layer_split_request(model, options, {std::int64_t{1} << 40, 0.9, 0}, device_plan_options());
  r.gpu_layers = k;
  const LayerSplitPlan at_k = plan_layer_split(r);
  const std::int64_t half_a_layer = r.layer_bytes[static_cast<std::size_t>(k)] / 2;
  return static_cast<std::uint64_t>(
      static_cast<double>(at_k.gpu.total() + half_a_layer) / options.memory_utilisation + 1.0);
}

}  // namespace kvscope::test
