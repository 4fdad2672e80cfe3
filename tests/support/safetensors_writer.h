// A .safetensors writer for test fixtures: the header is computed from the shapes first, then
// each tensor's bytes are streamed straight to the file, so a whole model (SmolLM2 dequantized
// is 270 MB of BF16) is never held in memory. Layout as safetensors_file.h reads it: an 8-byte
// little-endian header length, the JSON header (padded with spaces to a multiple of 8, as
// the library pads it), then the tensors back to back in the order given.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "model/safetensors_file.h"

namespace kvscope::test {

struct SafetensorsEntry {
  std::string name;
  SafetensorsDtype dtype = SafetensorsDtype::F32;
  std::vector<std::int64_t> shape;  // outermost first: [rows, cols]
  // Writes the tensor's bytes, exactly elements x dtype size of them (the writer checks).
  std::function<void(std::ostream&)> write_data;
};

// Writes `tensors` to `path`; throws std::runtime_error when a tensor writes the wrong number
// of bytes or the file cannot be written.
void write_safetensors(const std::filesystem::path& path,
                       const std::vector<SafetensorsEntry>& tensors);

}  // namespace kvscope::test
