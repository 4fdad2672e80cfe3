#include "backend/cuda_factory.h"

namespace kvscope {

BackendFactory cuda_backend_factory(CudaBackendOptions base) {
  return [base](const Model& model, const EngineOptions& options,
                std::string* why) -> std::unique_ptr<Backend> {
    CudaBackendOptions cuda = base;
    cuda.context_length = options.context_length;
    return make_cuda_backend(model, cuda, why);
  };
}

}  // namespace kvscope
