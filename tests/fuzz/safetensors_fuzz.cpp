// libFuzzer harness: a .safetensors file (8-byte header length, JSON header, data).
#include <cstddef>
#include <cstdint>

#include "fuzz_support.h"
#include "model/safetensors_file.h"
#include "util/error.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const kvscope::fuzz::MemoryFile file(data, size);
  try {
    const kvscope::SafetensorsFile st(file.path());
    for (const auto& t : st.tensors()) (void)t.n_elements();
  } catch (const kvscope::Error&) {
  }
  return 0;
}
