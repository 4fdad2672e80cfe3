// A model file opened to read its header with plain reads (model discovery never maps a model:
// GgufFile::read_header, SafetensorsFile::read_header).
#pragma once

#include <cstdint>
#include <string>

#include "util/regular_file.h"

namespace kvscope {

struct HeaderFile {
  RegularFile file;        // read with file.read_at(offset, ...)
  std::uint64_t size = 0;  // bytes in the file
};

// Opens `path` (a regular file only: a FIFO, a device or a socket is refused without blocking);
// ModelError naming it when it cannot be opened.
HeaderFile open_header_file(const std::string& path);

}  // namespace kvscope
