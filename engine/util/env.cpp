#include "util/env.h"

#include <cstdlib>

namespace kvscope {

std::optional<std::string_view> env_turns_off(const char* name) {
  const char* env = std::getenv(name);
  const std::string_view v = env ? env : "";
  if (v == "0" || v == "off" || v == "false") return v;
  return std::nullopt;
}

}  // namespace kvscope
