// Where the download catalog (models.json of resources/catalog) is: --catalog FILE, else
// $KVSCOPE_CATALOG, else share/kvscope/catalog/models.json beside the binary's bin/ folder
// (the build tree and the installed layout both put it there).
#pragma once

#include <filesystem>

#include "cli/arg_parser.h"

namespace kvscope::cli {

std::filesystem::path catalog_file(const ArgParser& p);

}  // namespace kvscope::cli
