// A read-only memory map of a whole file. Model weights are used in place from the map,
// so opening a multi-GB model costs no copy and no RAM beyond the page cache.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace kvscope {

// Tells the OS that the whole pages inside [p, p + n) will not be read for a while, so it may
// reclaim them (MADV_PAGEOUT, Linux 5.4+). Only a hint: the bytes stay readable, a file page
// is read again on the next access, and nothing happens where the OS does not support it.
// For weights copied into another layout, so the mapped originals stop counting as resident.
void advise_pages_unneeded(const void* p, std::size_t n) noexcept;

class MappedFile {
 public:
  // Maps `path` read-only; throws ModelError naming the path and the OS reason on failure.
  explicit MappedFile(const std::string& path);
  ~MappedFile();
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const std::uint8_t* data() const { return data_; }
  std::size_t size() const { return size_; }
  std::span<const std::uint8_t> bytes() const { return {data_, size_}; }
  const std::string& path() const { return path_; }

 private:
  void release() noexcept;

  std::string path_;
  const std::uint8_t* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace kvscope
