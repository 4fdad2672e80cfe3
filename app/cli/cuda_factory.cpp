// The CUDA backend factory of this build: present when kernels/ was built (the toolkit
// was found), empty otherwise, so every command gives the same answer to "why is CUDA not
// used": no driver, no device, an unsupported weight type, or too little device memory.
#include "cli/engine_args.h"

#ifdef KVSCOPE_HAVE_CUDA
#include "cuda_backend.h"
#endif

namespace kvscope::cli {

BackendFactory cuda_backend_factory() {
#ifdef KVSCOPE_HAVE_CUDA
  return [](const Model& model, const EngineOptions& options,
            std::string* why) -> std::unique_ptr<Backend> {
    CudaBackendOptions cuda;
    cuda.context_length = options.context_length;
    return make_cuda_backend(model, cuda, why);
  };
#else
  return {};
#endif
}

}  // namespace kvscope::cli
