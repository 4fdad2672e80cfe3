// `bench --synthetic SHAPE --weights TYPE`: a random-weight model of a real model's shape
// (a preset of resources/presets/models.json, e.g. llama-3-8b), written once into a cache
// folder and reused, so a benchmark of a multi-GB model needs no download and no file to
// travel to the GPU machine. The weights are noise; speed depends only on shapes and types.
#pragma once

#include <string>

#include "cli/arg_parser.h"

namespace kvscope::cli {

void declare_synthetic_options(ArgParser& p);

// The GGUF file to benchmark: -m as given, or the synthetic model (written when missing).
// UsageError for both or neither, an unknown preset or weight type.
std::string bench_model_path(const ArgParser& p);

}  // namespace kvscope::cli
