// The text of a JSON document kvscope-cli prints. Strings read from files (a model's
// general.name, a file name in a model cache, an error naming such a file) may hold bytes
// that are not UTF-8; they print as U+FFFD instead of ending the command in nlohmann's
// type_error 316 after its work is done.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace kvscope::cli {

inline std::string json_text(const nlohmann::json& j, int indent = 2) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace kvscope::cli
