// What the libFuzzer harnesses share: the input as a file (the readers map files by path),
// and the one rule every harness checks: a bad input is a kvscope::Error, nothing else (a
// crash, a hang, std::bad_alloc or any other exception is a finding).
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

namespace kvscope::fuzz {

// `data` as an anonymous in-memory file; path() names it for the readers (/proc/self/fd/N).
class MemoryFile {
 public:
  MemoryFile(const std::uint8_t* data, std::size_t size) : fd_(::memfd_create("fuzz", 0)) {
    if (fd_ < 0) std::abort();
    for (std::size_t done = 0; done < size;) {
      const ssize_t n = ::write(fd_, data + done, size - done);
      if (n <= 0) std::abort();
      done += static_cast<std::size_t>(n);
    }
  }
  ~MemoryFile() { ::close(fd_); }
  MemoryFile(const MemoryFile&) = delete;
  MemoryFile& operator=(const MemoryFile&) = delete;

  std::string path() const { return "/proc/self/fd/" + std::to_string(fd_); }

 private:
  int fd_;
};

// The folder with models/ (KVSCOPE_SHARED_DIR, else the configured ../shared).
inline std::string shared_dir() {
  const char* env = std::getenv("KVSCOPE_SHARED_DIR");
  return env && *env ? env : KVSCOPE_DEFAULT_SHARED_DIR;
}

}  // namespace kvscope::fuzz
