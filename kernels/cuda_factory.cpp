#include "cuda_factory.h"

#include "cuda_backend.h"

namespace kvscope {

BackendFactory cuda_backend_factory() {
  return [](const Model& model, const EngineOptions& options,
            std::string* why) -> std::unique_ptr<Backend> {
    CudaBackendOptions cuda;
    cuda.context_length = options.context_length;
    return make_cuda_backend(model, cuda, why);
  };
}

}  // namespace kvscope
