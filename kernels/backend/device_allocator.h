// All device memory of the CUDA backend goes through one DeviceAllocator, which counts
// bytes per category (weights, KV pool, workspace). The live panel's VRAM chart is built
// from these counts plus cudaMemGetInfo (what the device has free, hence what others use),
// so what it shows is what was allocated. CUDA-free header: tests and the backend use it.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace kvscope::cuda {

enum class DeviceMemoryCategory : std::uint8_t { Weights, KvPool, Workspace };
inline constexpr std::size_t kDeviceMemoryCategories = 3;

struct DeviceMemoryStatus {
  std::uint64_t total = 0;  // the device's memory
  std::uint64_t free = 0;   // free right now, for everyone
};

// Not thread-safe: the backend that owns it runs on one thread.
class DeviceAllocator {
 public:
  explicit DeviceAllocator(int device = 0);
  DeviceAllocator(const DeviceAllocator&) = delete;
  DeviceAllocator& operator=(const DeviceAllocator&) = delete;

  int device() const { return device_; }
  // cudaMalloc of `bytes` (0 gives nullptr). CapacityError naming `what`, the bytes asked
  // and the bytes free when the device has too little.
  void* allocate(std::size_t bytes, DeviceMemoryCategory category, const char* what);
  // cudaFree; never throws (called from destructors).
  void release(void* ptr, std::size_t bytes, DeviceMemoryCategory category) noexcept;

  std::uint64_t bytes(DeviceMemoryCategory category) const {
    return bytes_[static_cast<std::size_t>(category)];
  }
  std::uint64_t total_bytes() const;
  // cudaMemGetInfo on this allocator's device.
  DeviceMemoryStatus query() const;

 private:
  int device_;
  std::array<std::uint64_t, kDeviceMemoryCategories> bytes_{};
};

// An owned device allocation, move-only. Copies are synchronous (tests, uploads at load).
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(DeviceAllocator& alloc, std::size_t bytes, DeviceMemoryCategory category,
               const char* what);
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() { reset(); }

  void reset() noexcept;
  // Makes the buffer hold at least `bytes` (reallocating, contents lost, when it is smaller).
  void reserve(DeviceAllocator& alloc, std::size_t bytes, DeviceMemoryCategory category,
               const char* what);

  std::size_t size() const { return bytes_; }
  void* get() const { return ptr_; }
  template <typename T>
  T* as() const {
    return static_cast<T*>(ptr_);
  }

  // Host <-> device copies of `bytes` at byte `offset` (UsageError past the end).
  void upload(const void* src, std::size_t bytes, std::size_t offset = 0);
  void download(void* dst, std::size_t bytes, std::size_t offset = 0) const;
  void fill_zero();

 private:
  void check_range(std::size_t bytes, std::size_t offset) const;

  DeviceAllocator* alloc_ = nullptr;
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
  DeviceMemoryCategory category_ = DeviceMemoryCategory::Workspace;
};

}  // namespace kvscope::cuda
