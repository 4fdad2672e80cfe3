#include "model/folder_file.h"

#include <algorithm>
#include <filesystem>
#include <vector>

#include "util/error.h"

namespace kvscope {

namespace {

namespace fs = std::filesystem;

// Whether `path` is `root` or inside it, both canonical (compared part by part, so
// /models/a is not inside /models/ab).
bool is_within(const fs::path& path, const fs::path& root) {
  const auto [root_end, path_end] =
      std::mismatch(root.begin(), root.end(), path.begin(), path.end());
  return root_end == root.end();
}

// The folder itself and, for a snapshot of the Hugging Face cache
// (.../models--ORG--NAME/snapshots/REV), its repository folder; canonical.
std::vector<fs::path> allowed_roots(const fs::path& folder) {
  std::vector<fs::path> roots{folder};
  const fs::path snapshots = folder.parent_path();
  const fs::path repo = snapshots.parent_path();
  if (snapshots.filename() == "snapshots" && repo.filename().string().rfind("models--", 0) == 0) {
    roots.push_back(repo);
  }
  return roots;
}

}  // namespace

std::string model_folder_file(const std::string& folder, const std::string& name) {
  const fs::path path = fs::path(folder) / name;
  std::error_code ec;
  if (!fs::exists(path, ec)) return path.string();  // missing (or a dangling link)
  const fs::path target = fs::canonical(path, ec);
  if (ec) throw_error<ModelError>("{}: cannot resolve its path ({})", path.string(), ec.message());
  const fs::path root = fs::canonical(folder, ec);
  if (ec) throw_error<ModelError>("{}: cannot resolve its path ({})", folder, ec.message());
  const auto roots = allowed_roots(root);
  if (std::any_of(roots.begin(), roots.end(),
                  [&](const fs::path& r) { return is_within(target, r); })) {
    return path.string();
  }
  throw_error<ModelError>(
      "{}: a symbolic link to {}, outside the model folder{}; refusing to read it (copy the file "
      "into the folder if it belongs to the model)",
      path.string(), target.string(),
      roots.size() > 1 ? " and its Hugging Face cache repository " + roots.back().string() : "");
}

}  // namespace kvscope
