#include "model/header_file.h"

#include "util/error.h"

namespace kvscope {

HeaderFile open_header_file(const std::string& path) {
  HeaderFile f{RegularFile(path)};
  if (!f.file.is_open()) throw_error<ModelError>("{}: cannot open: {}", path, f.file.error());
  f.size = f.file.size();
  return f;
}

}  // namespace kvscope
