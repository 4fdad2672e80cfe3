// What a loaded model's files were when it was loaded (size, modification time, inode), to
// tell before each use whether one was rewritten, truncated or removed since. Weights are
// read from a memory map, and a mapped file that shrinks turns the next read of a page past
// its new end into SIGBUS, which no error handling can catch; a check before each step
// turns that into a message. What remains: a file changed between the check and the reads
// of that step can still end the process (only private copies of every page would close
// that, at the cost of the memory the map saves).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kvscope {

class FileSnapshot {
 public:
  FileSnapshot() = default;

  // `path`: a model file, or a folder (its *.gguf, *.safetensors and *.bin files, not
  // recursing: a Hugging Face folder). Files that cannot be read are left out.
  static FileSnapshot take(const std::string& path);

  // "" while every file is as it was; otherwise one line naming the first file that changed
  // and how (removed, size a -> b, rewritten).
  std::string changed() const;

  std::size_t files() const { return entries_.size(); }

 private:
  struct Entry {
    std::string path;
    std::uint64_t size = 0;
    std::int64_t mtime_ns = 0;
    std::uint64_t inode = 0;
  };
  static bool read(const std::string& path, Entry& out);

  std::vector<Entry> entries_;
};

}  // namespace kvscope
