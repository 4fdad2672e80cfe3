// libFuzzer harness: a Hugging Face config.json, as the loader parses it into a ModelSpec.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "model/hf_config.h"
#include "util/error.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    (void)kvscope::parse_hf_config(std::string_view(reinterpret_cast<const char*>(data), size),
                                   "config.json");
  } catch (const kvscope::Error&) {
  }
  return 0;
}
