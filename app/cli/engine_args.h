// The options every model-running command shares (-m, -c, -t, -ctk, -ctv, --block-size,
// --backend, --kv-budget, --memory), declared once and turned into EngineOptions.
#pragma once

#include <cstdint>
#include <string>

#include "cli/arg_parser.h"
#include "run/engine.h"

namespace kvscope::cli {

void declare_engine_options(ArgParser& p);
EngineOptions engine_options(const ArgParser& p);

// The CUDA backend factory of this build (empty when built without CUDA).
BackendFactory cuda_backend_factory();

}  // namespace kvscope::cli
