// The Engine's factory for the CUDA backend (EngineOptions::cuda_factory), the one place
// the CLI and the GUI get it from: nullptr with the reason (no driver, no device, an
// unsupported weight type, too little device memory) when it cannot be used.
#pragma once

#include "backend/cuda_backend.h"
#include "run/engine.h"

namespace kvscope {

// Each backend it makes has `base`'s options, with the engine's context length.
BackendFactory cuda_backend_factory(CudaBackendOptions base = {});

}  // namespace kvscope
