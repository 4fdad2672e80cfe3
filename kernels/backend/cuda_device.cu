#include "backend/cuda_device.h"

#include <cuda_runtime.h>

#include <string>

namespace kvscope {

namespace {

std::string describe(cudaError_t err) {
  switch (err) {
    case cudaErrorInsufficientDriver:
      return "no NVIDIA driver (or one too old for this CUDA runtime) is installed";
    case cudaErrorNoDevice:
      return "no CUDA-capable GPU was found";
    default:
      return std::string(cudaGetErrorName(err)) + ": " + cudaGetErrorString(err);
  }
}

}  // namespace

CudaDeviceInfo probe_cuda_device(int device) {
  CudaDeviceInfo info;
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    info.reason = describe(err);
    cudaGetLastError();  // clear the sticky-free error so later calls start clean
    return info;
  }
  if (device < 0 || device >= count) {
    info.reason = "CUDA device " + std::to_string(device) + " requested, " + std::to_string(count) +
                  " present";
    return info;
  }
  cudaDeviceProp prop{};
  err = cudaGetDeviceProperties(&prop, device);
  if (err != cudaSuccess) {
    info.reason = describe(err);
    return info;
  }
  info.device = device;
  info.name = prop.name;
  info.compute_major = prop.major;
  info.compute_minor = prop.minor;
  info.sm_count = prop.multiProcessorCount;
  info.shared_memory_per_block_optin = prop.sharedMemPerBlockOptin;
  info.total_bytes = prop.totalGlobalMem;
  size_t free_bytes = 0;
  size_t total_bytes = 0;
  if (cudaSetDevice(device) == cudaSuccess &&
      cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess) {
    info.free_bytes = free_bytes;
    info.total_bytes = total_bytes;
  }
  info.available = true;
  return info;
}

}  // namespace kvscope
