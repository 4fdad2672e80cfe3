#include "cli/presets_path.h"

#include <cstdlib>
#include <system_error>

namespace kvscope::cli {

std::filesystem::path presets_dir(const ArgParser& p) {
  namespace fs = std::filesystem;
  if (auto dir = p.get("--presets")) return *dir;
  if (const char* env = std::getenv("KVSCOPE_PRESETS_DIR"); env != nullptr && *env != '\0') {
    return env;
  }
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return "share/kvscope/presets";
  return exe.parent_path().parent_path() / "share" / "kvscope" / "presets";
}

}  // namespace kvscope::cli
