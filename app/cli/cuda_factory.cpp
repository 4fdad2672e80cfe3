// The CUDA backend factory of this build: kernels/' factory when the toolkit was found,
// empty otherwise (the engine then says "this build has no CUDA backend").
#include "cli/engine_args.h"

#ifdef KVSCOPE_HAVE_CUDA
#include "cuda_factory.h"
#endif

namespace kvscope::cli {

BackendFactory cuda_backend_factory() {
#ifdef KVSCOPE_HAVE_CUDA
  return kvscope::cuda_backend_factory();
#else
  return {};
#endif
}

}  // namespace kvscope::cli
