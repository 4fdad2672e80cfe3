#include "util/mapped_file.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <utility>

#include "util/error.h"
#include "util/regular_file.h"

namespace kvscope {

MappedFile::MappedFile(const std::string& path) : path_(path) {
  const RegularFile file(path);  // never blocks on a FIFO; refuses devices and sockets
  if (!file.is_open()) throw_error<ModelError>("{}: cannot open ({})", path, file.error());
  size_ = static_cast<std::size_t>(file.size());
  if (size_ > 0) {
    void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, file.fd(), 0);
    if (p == MAP_FAILED) {
      throw_error<ModelError>("{}: cannot map {} bytes ({})", path, size_, std::strerror(errno));
    }
    data_ = static_cast<const std::uint8_t*>(p);
  }
}

MappedFile::~MappedFile() {
  release();
}

MappedFile::MappedFile(MappedFile&& other) noexcept
    : path_(std::move(other.path_)),
      data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)) {}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    release();
    path_ = std::move(other.path_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

void MappedFile::release() noexcept {
  if (data_ != nullptr) ::munmap(const_cast<std::uint8_t*>(data_), size_);
  data_ = nullptr;
  size_ = 0;
}

void advise_pages_unneeded(const void* p, std::size_t n) noexcept {
#ifdef MADV_PAGEOUT
  const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
  const auto begin = (reinterpret_cast<std::uintptr_t>(p) + page - 1) / page * page;
  const auto end = (reinterpret_cast<std::uintptr_t>(p) + n) / page * page;
  if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_PAGEOUT);
#else
  (void)p;
  (void)n;
#endif
}

}  // namespace kvscope
