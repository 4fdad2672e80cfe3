// A model file opened to read its header with plain reads (model discovery never maps a model:
// GgufFile::read_header, SafetensorsFile::read_header).
#pragma once

#include <cstdint>
#include <fstream>
#include <string>

namespace kvscope {

struct HeaderFile {
  std::ifstream in;        // binary, positioned at the start
  std::uint64_t size = 0;  // bytes in the file
};

// Opens `path`; ModelError naming it when it cannot be opened or sized.
HeaderFile open_header_file(const std::string& path);

}  // namespace kvscope
