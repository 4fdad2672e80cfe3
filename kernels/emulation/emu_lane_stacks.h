// The stacks of the CUDA emulation's lanes (emu_block.cpp): one mapping for all of them.
#pragma once

#include <sys/mman.h>

#include <boost/context/stack_context.hpp>
#include <cstddef>
#include <new>

namespace kvscope::emu {

namespace ctx = boost::context;

// Lane stacks: 64 KiB each (kernels keep small arrays; the deepest frames are the emulation's
// own), side by side in one mapping the kernel may back with huge pages, so the 32 stacks a
// warp's context switches walk through share a few TLB entries instead of 64.
constexpr std::size_t kStackBytes = 64 * 1024;
constexpr std::size_t kMaxLanes = 1024;

class LaneStacks {
 public:
  LaneStacks() {
    base_ = static_cast<char*>(mmap(nullptr, kStackBytes * kMaxLanes, PROT_READ | PROT_WRITE,
                                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0));
    if (base_ == MAP_FAILED) throw std::bad_alloc();
    madvise(base_, kStackBytes * kMaxLanes, MADV_HUGEPAGE);
  }
  ~LaneStacks() { munmap(base_, kStackBytes * kMaxLanes); }
  char* top(int lane) const { return base_ + kStackBytes * (static_cast<std::size_t>(lane) + 1); }

 private:
  char* base_ = nullptr;
};

// boost::context's stack allocator concept over one slice of LaneStacks.
struct SliceAllocator {
  char* top;
  ctx::stack_context allocate() {
    ctx::stack_context sc;
    sc.size = kStackBytes;
    sc.sp = top;
    return sc;
  }
  void deallocate(ctx::stack_context&) {}
};

struct AbortLane {};  // unwinds a lane's kernel when its block has failed

}  // namespace kvscope::emu
