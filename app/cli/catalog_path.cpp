#include "cli/catalog_path.h"

#include <cstdlib>
#include <system_error>

namespace kvscope::cli {

std::filesystem::path catalog_file(const ArgParser& p) {
  namespace fs = std::filesystem;
  if (auto file = p.get("--catalog")) return *file;
  if (const char* env = std::getenv("KVSCOPE_CATALOG"); env != nullptr && *env != '\0') {
    return env;
  }
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  const fs::path share = ec ? fs::path("share") : exe.parent_path().parent_path() / "share";
  return share / "kvscope" / "catalog" / "models.json";
}

}  // namespace kvscope::cli
