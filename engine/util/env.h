// Reading the environment switches that turn an engine feature off for triage
// (KVSCOPE_Q8_ACTIVATIONS=0, KVSCOPE_CUDA_GRAPHS=off, ...). The one reader both backends use.
#pragma once

#include <optional>
#include <string_view>

namespace kvscope {

// The variable's value when it turns a feature off ("0", "off" or "false"), else nullopt.
std::optional<std::string_view> env_turns_off(const char* name);

}  // namespace kvscope
