#include "model/header_file.h"

#include <cerrno>
#include <cstring>

#include "util/error.h"

namespace kvscope {

HeaderFile open_header_file(const std::string& path) {
  HeaderFile f;
  f.in.open(path, std::ios::binary | std::ios::ate);
  if (!f.in) throw_error<ModelError>("{}: cannot open: {}", path, std::strerror(errno));
  const std::streamoff end = f.in.tellg();
  if (end < 0) throw_error<ModelError>("{}: cannot tell its size", path);
  f.size = static_cast<std::uint64_t>(end);
  f.in.seekg(0);
  return f;
}

}  // namespace kvscope
