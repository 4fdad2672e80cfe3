#include "bench/device_copy_bandwidth.h"

#include <cuda_runtime.h>

#include "backend/cuda_check.h"

namespace kvscope {

namespace {

// Frees the buffers and events whatever happens.
struct CopyBuffers {
  void* src = nullptr;
  void* dst = nullptr;
  cudaEvent_t start = nullptr;
  cudaEvent_t stop = nullptr;
  ~CopyBuffers() {
    cudaFree(src);
    cudaFree(dst);
    if (start) cudaEventDestroy(start);
    if (stop) cudaEventDestroy(stop);
  }
};

}  // namespace

double measure_device_copy_bandwidth(int device, std::size_t bytes, int reps) {
  KVSCOPE_CUDA_CHECK(cudaSetDevice(device));
  CopyBuffers b;
  KVSCOPE_CUDA_CHECK(cudaMalloc(&b.src, bytes));
  KVSCOPE_CUDA_CHECK(cudaMalloc(&b.dst, bytes));
  KVSCOPE_CUDA_CHECK(cudaMemset(b.src, 1, bytes));
  KVSCOPE_CUDA_CHECK(cudaEventCreate(&b.start));
  KVSCOPE_CUDA_CHECK(cudaEventCreate(&b.stop));
  KVSCOPE_CUDA_CHECK(cudaMemcpy(b.dst, b.src, bytes, cudaMemcpyDeviceToDevice));  // warm-up
  KVSCOPE_CUDA_CHECK(cudaEventRecord(b.start));
  for (int i = 0; i < reps; ++i) {
    KVSCOPE_CUDA_CHECK(cudaMemcpyAsync(b.dst, b.src, bytes, cudaMemcpyDeviceToDevice));
  }
  KVSCOPE_CUDA_CHECK(cudaEventRecord(b.stop));
  KVSCOPE_CUDA_CHECK(cudaEventSynchronize(b.stop));
  float ms = 0.0f;
  KVSCOPE_CUDA_CHECK(cudaEventElapsedTime(&ms, b.start, b.stop));
  return 2.0 * static_cast<double>(bytes) * reps / (static_cast<double>(ms) * 1e-3) / 1e9;
}

}  // namespace kvscope
