// The sampling flags of `run` and `chat` (--temp, --top-k, --top-p, --min-p,
// --repeat-penalty, --seed). A flag not given takes the model's own value, from its
// generation_config.json (Engine::default_sampling), else KVScope's default; --help says so.
#pragma once

#include <string>

#include "cli/arg_parser.h"
#include "run/engine.h"

namespace kvscope::cli {

void declare_sampling_options(ArgParser& p);

// The flags given, over engine.default_sampling(). UsageError naming a flag out of range.
SamplingParams sampling_options(const ArgParser& p, const Engine& engine);

// Says on stderr which defaults came from the model's file and which of its values were
// ignored (a "note:" line each); nothing for a model without sampling values.
void print_sampling_notes(const Engine& engine);

}  // namespace kvscope::cli
