// The calling thread's current CUDA device, set for a scope. cudaSetDevice is per host thread,
// and cudaMalloc, cudaMemGetInfo and cudaMemset act on the current device: a backend on GPU 1
// asked for its memory from a thread whose current device is 0 (the UI's, or any thread that
// never chose one) would report GPU 0's free memory, and the KV budget would be sized from it.
// Every allocator call and memory query of the backend runs under a ScopedDevice. CUDA-free
// header; the runtime calls go through a DeviceApi, which tests replace.
#pragma once

namespace kvscope::cuda {

// cudaGetDevice / cudaSetDevice, returning the cudaError_t as int.
struct DeviceApi {
  int (*get)(int* device);
  int (*set)(int device);
};
const DeviceApi& cuda_device_api();  // the CUDA runtime's

class ScopedDevice {
 public:
  // Makes `device` current unless it already is; throws CudaError naming the call when the
  // runtime refuses (a lost context, a device that is not there).
  explicit ScopedDevice(int device, const DeviceApi& api = cuda_device_api());
  // Restores the previous device if the guard changed it; never throws.
  ~ScopedDevice();
  ScopedDevice(const ScopedDevice&) = delete;
  ScopedDevice& operator=(const ScopedDevice&) = delete;

 private:
  const DeviceApi& api_;
  int previous_ = -1;  // >= 0: changed, restore it
};

}  // namespace kvscope::cuda
