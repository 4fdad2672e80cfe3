// The options every model-running command shares (-m, -c, -t, -ctk, -ctv, --block-size,
// --backend, --kv-budget, --memory), declared once and turned into EngineOptions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cli/arg_parser.h"
#include "run/engine.h"

namespace kvscope::cli {

void declare_engine_options(ArgParser& p);
EngineOptions engine_options(const ArgParser& p);

// The CUDA backend factory of this build (empty when built without CUDA).
BackendFactory cuda_backend_factory();
// How a CUDA backend ran its decode steps ("CUDA graphs: 250 steps replayed, ..."; why they
// are off, when they are), or "" for another backend.
std::string cuda_graph_summary(const Backend& backend);
// Which paged attention kernel a CUDA backend's layer groups run and why, a line each
// ("attention, layer group 0: fast kernel"); empty for another backend.
std::vector<std::string> cuda_attention_summary(const Backend& backend);

}  // namespace kvscope::cli
