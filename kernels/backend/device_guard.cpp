#include "backend/device_guard.h"

#include <cuda_runtime.h>

#include "backend/cuda_check.h"

namespace kvscope::cuda {

namespace {

int runtime_get(int* device) {
  return static_cast<int>(cudaGetDevice(device));
}

int runtime_set(int device) {
  return static_cast<int>(cudaSetDevice(device));
}

void check(int err, const char* call) {
  if (err != 0) throw_cuda_error(static_cast<cudaError_t>(err), call, __FILE__, __LINE__);
}

}  // namespace

const DeviceApi& cuda_device_api() {
  static const DeviceApi api{runtime_get, runtime_set};
  return api;
}

ScopedDevice::ScopedDevice(int device, const DeviceApi& api) : api_(api) {
  int current = -1;
  check(api_.get(&current), "cudaGetDevice (ScopedDevice)");
  if (current == device) return;
  check(api_.set(device), "cudaSetDevice (ScopedDevice)");
  previous_ = current;
}

ScopedDevice::~ScopedDevice() {
  if (previous_ >= 0) api_.set(previous_);  // an error here has no one left to tell
}

}  // namespace kvscope::cuda
