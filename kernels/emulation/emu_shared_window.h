// Where the CUDA emulation puts a block's dynamic shared memory (emu_block.cpp).
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <new>

namespace kvscope::emu {

// Dynamic shared memory of the running block: it ends where a protected page begins, so a
// read or write past the size the launch asked for faults at once.
class SharedWindow {
 public:
  unsigned char* place(std::size_t bytes) {
    const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    const std::size_t need = (bytes + 15) / 16 * 16;
    if (need > capacity_) {
      release();
      capacity_ = (need + page - 1) / page * page;
      base_ = static_cast<unsigned char*>(mmap(nullptr, capacity_ + page, PROT_READ | PROT_WRITE,
                                               MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
      if (base_ == MAP_FAILED) throw std::bad_alloc();
      mprotect(base_ + capacity_, page, PROT_NONE);
      guard_ = page;
    }
    return base_ + capacity_ - need;
  }
  ~SharedWindow() { release(); }

 private:
  void release() {
    if (base_) munmap(base_, capacity_ + guard_);
    base_ = nullptr;
    capacity_ = 0;
  }
  unsigned char* base_ = nullptr;
  std::size_t capacity_ = 0;
  std::size_t guard_ = 0;
};

}  // namespace kvscope::emu
