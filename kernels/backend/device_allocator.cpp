#include "backend/device_allocator.h"

#include <exception>
#include <utility>

#include "backend/cuda_check.h"
#include "backend/device_guard.h"
#include "util/error.h"

namespace kvscope::cuda {

namespace {

const char* category_name(DeviceMemoryCategory c) {
  switch (c) {
    case DeviceMemoryCategory::Weights:
      return "weights";
    case DeviceMemoryCategory::KvPool:
      return "KV pool";
    case DeviceMemoryCategory::Workspace:
      return "workspace";
  }
  return "?";
}

}  // namespace

DeviceAllocator::DeviceAllocator(int device) : device_(device) {
  KVSCOPE_CUDA_CHECK(cudaSetDevice(device));
}

void* DeviceAllocator::allocate(std::size_t bytes, DeviceMemoryCategory category,
                                const char* what) {
  if (bytes == 0) return nullptr;
  const ScopedDevice on(device_);
  void* ptr = nullptr;
  const cudaError_t err = cudaMalloc(&ptr, bytes);
  if (err == cudaErrorMemoryAllocation) {
    cudaGetLastError();
    const DeviceMemoryStatus s = query();
    throw_error<CapacityError>(
        "CUDA: cannot allocate {} bytes for {} ({}): {} bytes free of {} on the device", bytes,
        what, category_name(category), s.free, s.total);
  }
  KVSCOPE_CUDA_CHECK(err);
  bytes_[static_cast<std::size_t>(category)] += bytes;
  return ptr;
}

void DeviceAllocator::release(void* ptr, std::size_t bytes,
                              DeviceMemoryCategory category) noexcept {
  if (!ptr) return;
  try {
    const ScopedDevice on(device_);
    cudaFree(ptr);  // an error here (a dead context at exit) has no one left to tell
  } catch (const std::exception&) {  // the device could not even be selected: nor freed
  }
  bytes_[static_cast<std::size_t>(category)] -= bytes;
}

std::uint64_t DeviceAllocator::total_bytes() const {
  std::uint64_t n = 0;
  for (const std::uint64_t b : bytes_) n += b;
  return n;
}

DeviceMemoryStatus DeviceAllocator::query() const {
  const ScopedDevice on(device_);
  std::size_t free_bytes = 0, total = 0;
  KVSCOPE_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total));
  return {total, free_bytes};
}

DeviceBuffer::DeviceBuffer(DeviceAllocator& alloc, std::size_t bytes, DeviceMemoryCategory category,
                           const char* what)
    : alloc_(&alloc), bytes_(bytes), category_(category) {
  ptr_ = alloc.allocate(bytes, category, what);
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : alloc_(std::exchange(other.alloc_, nullptr)),
      ptr_(std::exchange(other.ptr_, nullptr)),
      bytes_(std::exchange(other.bytes_, 0)),
      category_(other.category_) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    reset();
    alloc_ = std::exchange(other.alloc_, nullptr);
    ptr_ = std::exchange(other.ptr_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
    category_ = other.category_;
  }
  return *this;
}

void DeviceBuffer::reset() noexcept {
  if (alloc_) alloc_->release(ptr_, bytes_, category_);
  ptr_ = nullptr;
  bytes_ = 0;
}

void DeviceBuffer::reserve(DeviceAllocator& alloc, std::size_t bytes, DeviceMemoryCategory category,
                           const char* what) {
  if (ptr_ && bytes_ >= bytes) return;
  reset();
  *this = DeviceBuffer(alloc, bytes, category, what);
}

void DeviceBuffer::check_range(std::size_t bytes, std::size_t offset) const {
  if (offset > bytes_ || bytes > bytes_ - offset) {
    throw_error<UsageError>("device buffer: copy of {} bytes at offset {} past its {} bytes", bytes,
                            offset, bytes_);
  }
}

void DeviceBuffer::upload(const void* src, std::size_t bytes, std::size_t offset) {
  check_range(bytes, offset);
  if (bytes == 0) return;
  const ScopedDevice on(alloc_->device());
  KVSCOPE_CUDA_CHECK(
      cudaMemcpy(static_cast<char*>(ptr_) + offset, src, bytes, cudaMemcpyHostToDevice));
}

void DeviceBuffer::download(void* dst, std::size_t bytes, std::size_t offset) const {
  check_range(bytes, offset);
  if (bytes == 0) return;
  const ScopedDevice on(alloc_->device());
  KVSCOPE_CUDA_CHECK(
      cudaMemcpy(dst, static_cast<const char*>(ptr_) + offset, bytes, cudaMemcpyDeviceToHost));
}

void DeviceBuffer::fill_zero() {
  if (bytes_ == 0) return;
  const ScopedDevice on(alloc_->device());
  KVSCOPE_CUDA_CHECK(cudaMemset(ptr_, 0, bytes_));
}

}  // namespace kvscope::cuda
