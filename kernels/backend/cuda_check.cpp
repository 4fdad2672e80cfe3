#include "backend/cuda_check.h"

#include "util/error.h"

namespace kvscope::cuda {

void throw_cuda_error(cudaError_t err, const char* expr, const char* file, int line) {
  cudaGetLastError();  // clear a non-sticky error so the next call starts clean
  if (err == cudaErrorMemoryAllocation) {
    throw_error<CapacityError>("CUDA out of device memory in {} ({}:{})", expr, file, line);
  }
  throw_error<Error>("CUDA error {} ({}) in {} ({}:{})", cudaGetErrorName(err),
                     cudaGetErrorString(err), expr, file, line);
}

void throw_cublas_error(int status, const char* expr, const char* file, int line) {
  throw_error<Error>("cuBLAS error status {} in {} ({}:{})", status, expr, file, line);
}

void throw_usage_error(const std::string& message) {
  throw UsageError(message);
}

}  // namespace kvscope::cuda
