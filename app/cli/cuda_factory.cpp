// The CUDA backend factory of this build: kernels/' factory when the toolkit was found,
// empty otherwise (the engine then says "this build has no CUDA backend").
#include "cli/engine_args.h"

#include <fmt/format.h>

#ifdef KVSCOPE_HAVE_CUDA
#include "backend/cuda_backend.h"
#include "backend/cuda_factory.h"
#endif

namespace kvscope::cli {

BackendFactory cuda_backend_factory() {
#ifdef KVSCOPE_HAVE_CUDA
  return kvscope::cuda_backend_factory();
#else
  return {};
#endif
}

std::string cuda_graph_summary([[maybe_unused]] const Backend& backend) {
#ifdef KVSCOPE_HAVE_CUDA
  const auto* cuda = dynamic_cast<const CudaBackend*>(&backend);
  if (cuda == nullptr) return {};
  const CudaGraphReport r = cuda->graph_report();
  if (!r.enabled) {
    return fmt::format("CUDA graphs off ({}): {} decode steps launched kernel by kernel",
                       r.off_reason, r.eager_steps);
  }
  return fmt::format(
      "CUDA graphs: {} decode steps replayed, {} eager; {} captures ({} updated in place, {} "
      "instantiated)",
      r.graph_steps, r.eager_steps, r.captures, r.updates, r.instantiations);
#else
  return {};
#endif
}

std::vector<std::string> cuda_attention_summary([[maybe_unused]] const Backend& backend) {
  std::vector<std::string> lines;
#ifdef KVSCOPE_HAVE_CUDA
  if (const auto* cuda = dynamic_cast<const CudaBackend*>(&backend)) {
    for (const std::string& line : cuda->attention_report()) lines.push_back("attention, " + line);
  }
#endif
  return lines;
}

}  // namespace kvscope::cli
