// Device memory in the CUDA emulation: host memory mapped so that every allocation ends where a
// protected page begins (and starts one page after another), so a kernel that reads or writes
// past its buffer faults at once instead of corrupting a neighbour. Starts are 256-byte aligned
// as cudaMalloc's are; the device's capacity is KVSCOPE_EMU_DEVICE_MEMORY (default 2 GiB).
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <iterator>
#include <map>
#include <mutex>

#include "emu_internal.h"
#include "emu_runtime_api.h"

namespace kvscope::emu {

namespace {

struct Mapping {
  void* base;
  std::size_t mapped;  // bytes mapped, guards included
  std::size_t bytes;   // bytes asked for
  bool device;         // false: pinned host memory (cudaHostAlloc)
};

std::mutex memory_mutex;
std::map<std::uintptr_t, Mapping>& mappings() {
  static std::map<std::uintptr_t, Mapping> m;
  return m;
}
std::size_t device_used = 0;

std::size_t page_bytes() {
  static const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  return page;
}

void* map_guarded(std::size_t bytes, bool device) {
  const std::size_t page = page_bytes();
  const std::size_t span = (bytes + 255) / 256 * 256;
  const std::size_t body = (span + page - 1) / page * page;
  const std::size_t mapped = body + 2 * page;
  void* base = mmap(nullptr, mapped, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (base == MAP_FAILED) return nullptr;
  auto* b = static_cast<unsigned char*>(base);
  mprotect(b, page, PROT_NONE);
  mprotect(b + page + body, page, PROT_NONE);
  void* p = b + page + body - span;
  mappings()[reinterpret_cast<std::uintptr_t>(p)] = {base, mapped, bytes, device};
  return p;
}

cudaError_t unmap(void* p, bool device) {
  if (!p) return cudaSuccess;
  std::lock_guard lock(memory_mutex);
  const auto it = mappings().find(reinterpret_cast<std::uintptr_t>(p));
  if (it == mappings().end() || it->second.device != device) return cudaErrorInvalidValue;
  if (device) device_used -= it->second.bytes;
  munmap(it->second.base, it->second.mapped);
  mappings().erase(it);
  return cudaSuccess;
}

}  // namespace

bool is_device_range(const void* p, std::size_t bytes) {
  const auto at = reinterpret_cast<std::uintptr_t>(p);
  std::lock_guard lock(memory_mutex);
  auto it = mappings().upper_bound(at);
  if (it == mappings().begin()) return false;
  it = std::prev(it);
  return it->second.device && at + bytes <= it->first + it->second.bytes;
}

namespace {

// The device side of a copy must lie inside one allocation, as the device checks it.
cudaError_t check_copy(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind) {
  if (bytes == 0) return cudaSuccess;
  const bool dst_device = kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice;
  const bool src_device = kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice;
  if ((dst_device && !is_device_range(dst, bytes)) ||
      (src_device && !is_device_range(src, bytes))) {
    set_error(cudaErrorInvalidValue, "a copy of " + std::to_string(bytes) +
                                         " bytes outside the device allocation it names");
    return cudaErrorInvalidValue;
  }
  return cudaSuccess;
}

}  // namespace

}  // namespace kvscope::emu

using kvscope::emu::result;

cudaError_t cudaMalloc(void** ptr, std::size_t bytes) {
  namespace emu = kvscope::emu;
  if (!ptr) return result(cudaErrorInvalidValue);
  *ptr = nullptr;
  if (emu::refuse_during_capture()) return result(cudaErrorStreamCaptureUnsupported);
  if (bytes == 0) return result(cudaSuccess);
  std::lock_guard lock(emu::memory_mutex);
  if (bytes > emu::device_memory_bytes() - emu::device_used) {
    return result(cudaErrorMemoryAllocation);
  }
  *ptr = emu::map_guarded(bytes, true);
  if (!*ptr) return result(cudaErrorMemoryAllocation);
  emu::device_used += bytes;
  return result(cudaSuccess);
}

cudaError_t cudaFree(void* ptr) {
  if (kvscope::emu::refuse_during_capture()) return result(cudaErrorStreamCaptureUnsupported);
  return result(kvscope::emu::unmap(ptr, true));
}

cudaError_t cudaHostAlloc(void** ptr, std::size_t bytes, unsigned) {
  namespace emu = kvscope::emu;
  if (!ptr) return result(cudaErrorInvalidValue);
  std::lock_guard lock(emu::memory_mutex);
  *ptr = emu::map_guarded(bytes == 0 ? 1 : bytes, false);
  return result(*ptr ? cudaSuccess : cudaErrorMemoryAllocation);
}

cudaError_t cudaMallocHost(void** ptr, std::size_t bytes) {
  return cudaHostAlloc(ptr, bytes, cudaHostAllocDefault);
}

cudaError_t cudaFreeHost(void* ptr) {
  return result(kvscope::emu::unmap(ptr, false));
}

cudaError_t cudaMemGetInfo(std::size_t* free_bytes, std::size_t* total_bytes) {
  namespace emu = kvscope::emu;
  if (!free_bytes || !total_bytes) return result(cudaErrorInvalidValue);
  std::lock_guard lock(emu::memory_mutex);
  *total_bytes = emu::device_memory_bytes();
  *free_bytes = *total_bytes - emu::device_used;
  return result(cudaSuccess);
}

cudaError_t cudaMemcpy(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind) {
  if (kvscope::emu::refuse_during_capture()) return result(cudaErrorStreamCaptureUnsupported);
  if (const cudaError_t err = kvscope::emu::check_copy(dst, src, bytes, kind); err != cudaSuccess)
    return result(err);
  if (const cudaError_t s = kvscope::emu::sticky_error(); s != cudaSuccess) return s;
  if (bytes) std::memmove(dst, src, bytes);
  return result(cudaSuccess);
}

cudaError_t cudaMemcpyAsync(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind,
                            cudaStream_t stream) {
  static const char kTag = 0;
  if (const cudaError_t err = kvscope::emu::check_copy(dst, src, bytes, kind); err != cudaSuccess)
    return result(err);
  return result(kvscope::emu::submit(stream, &kTag, [dst, src, bytes]() -> cudaError_t {
    if (bytes) std::memmove(dst, src, bytes);
    return cudaSuccess;
  }));
}

cudaError_t cudaMemset(void* dst, int value, std::size_t bytes) {
  if (kvscope::emu::refuse_during_capture()) return result(cudaErrorStreamCaptureUnsupported);
  if (bytes && !kvscope::emu::is_device_range(dst, bytes)) return result(cudaErrorInvalidValue);
  if (const cudaError_t s = kvscope::emu::sticky_error(); s != cudaSuccess) return s;
  if (bytes) std::memset(dst, value, bytes);
  return result(cudaSuccess);
}

cudaError_t cudaMemsetAsync(void* dst, int value, std::size_t bytes, cudaStream_t stream) {
  static const char kTag = 0;
  if (bytes && !kvscope::emu::is_device_range(dst, bytes)) return result(cudaErrorInvalidValue);
  return result(kvscope::emu::submit(stream, &kTag, [dst, value, bytes]() -> cudaError_t {
    if (bytes) std::memset(dst, value, bytes);
    return cudaSuccess;
  }));
}
