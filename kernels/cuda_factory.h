// The Engine's factory for the CUDA backend (EngineOptions::cuda_factory), the one place
// the CLI and the GUI get it from: nullptr with the reason (no driver, no device, an
// unsupported weight type, too little device memory) when it cannot be used.
#pragma once

#include "run/engine.h"

namespace kvscope {

BackendFactory cuda_backend_factory();

}  // namespace kvscope
