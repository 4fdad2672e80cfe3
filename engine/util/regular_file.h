// A file opened for reading only once it is known to be a regular file. open() on a FIFO
// waits for a writer that may never come, and a device or a socket has no size and no end;
// every file KVScope reads (model files, JSON, texts) is a regular file, so anything else is
// refused by name before it is opened (stat), the open cannot block (O_NONBLOCK) and what
// was opened is checked again (fstat: the path may have changed in between).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace kvscope {

class RegularFile {
 public:
  // Opens `path` read-only; on failure is_open() is false and error() says why.
  explicit RegularFile(const std::string& path);
  ~RegularFile();
  RegularFile(RegularFile&& other) noexcept;
  RegularFile& operator=(RegularFile&& other) noexcept;
  RegularFile(const RegularFile&) = delete;
  RegularFile& operator=(const RegularFile&) = delete;

  bool is_open() const { return fd_ >= 0; }
  // Why it is not open: "not a regular file (a FIFO)", or the OS's reason.
  const std::string& error() const { return error_; }
  int fd() const { return fd_; }
  std::uint64_t size() const { return size_; }  // when opened

  // Reads up to n bytes from `offset` into `out`; returns how many were read (fewer at the
  // end of the file or on a read error).
  std::size_t read_at(std::uint64_t offset, void* out, std::size_t n) const;

 private:
  void close() noexcept;

  int fd_ = -1;
  std::uint64_t size_ = 0;
  std::string error_;
};

// "a FIFO", "a directory", "a character device"... for a stat mode that is not a regular file.
std::string file_type_name(unsigned mode);

}  // namespace kvscope
