// Where the model and GPU presets (models.json, gpus.json) are: --presets DIR, else
// $KVSCOPE_PRESETS_DIR, else share/kvscope/presets beside the binary's bin/ folder (the
// build tree and the installed layout both put them there).
#pragma once

#include <filesystem>

#include "cli/arg_parser.h"

namespace kvscope::cli {

std::filesystem::path presets_dir(const ArgParser& p);

}  // namespace kvscope::cli
