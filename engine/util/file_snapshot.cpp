#include "util/file_snapshot.h"

#include <sys/stat.h>

#include <filesystem>
#include <system_error>

#include <fmt/format.h>

namespace kvscope {

namespace {

bool is_weight_file(const std::filesystem::path& p) {
  const std::string ext = p.extension().string();
  return ext == ".gguf" || ext == ".safetensors" || ext == ".bin";
}

}  // namespace

bool FileSnapshot::read(const std::string& path, Entry& out) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return false;
  out.path = path;
  out.size = static_cast<std::uint64_t>(st.st_size);
  out.mtime_ns = static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
  out.inode = static_cast<std::uint64_t>(st.st_ino);
  return true;
}

FileSnapshot FileSnapshot::take(const std::string& path) {
  FileSnapshot snap;
  std::error_code ec;
  std::vector<std::string> paths;
  if (std::filesystem::is_directory(path, ec)) {
    for (const auto& e : std::filesystem::directory_iterator(path, ec)) {
      if (e.is_regular_file(ec) && is_weight_file(e.path())) paths.push_back(e.path().string());
    }
  } else {
    paths.push_back(path);
  }
  for (const std::string& p : paths) {
    Entry e;
    if (read(p, e)) snap.entries_.push_back(std::move(e));
  }
  return snap;
}

std::string FileSnapshot::changed() const {
  for (const Entry& was : entries_) {
    Entry now;
    if (!read(was.path, now)) return fmt::format("the model file {} was removed", was.path);
    if (now.size != was.size) {
      return fmt::format("the model file {} changed size on disk ({} -> {} bytes)", was.path,
                         was.size, now.size);
    }
    if (now.mtime_ns != was.mtime_ns || now.inode != was.inode) {
      return fmt::format("the model file {} was rewritten on disk", was.path);
    }
  }
  return {};
}

}  // namespace kvscope
