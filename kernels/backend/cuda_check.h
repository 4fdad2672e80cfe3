// One way to check CUDA and cuBLAS calls: KVSCOPE_CUDA_CHECK(cudaMalloc(...)) throws a
// kvscope::Error (CapacityError for out-of-memory) naming the call, the error and the
// file:line, so a failing kernel becomes a message the app can show, never an abort.
// KVSCOPE_CUDA_CHECK_LAUNCH() after a <<<...>>> launch catches bad launch configurations and
// records the launch, so an error that surfaces later (at a synchronize) can name the last
// kernel launched before it.
#pragma once

#include <cuda_runtime.h>

#include <string>

namespace kvscope::cuda {

// Throws for a failed call; the message names expr, the CUDA error and file:line.
[[noreturn]] void throw_cuda_error(cudaError_t err, const char* expr, const char* file, int line);
// The same for a cuBLAS status code (passed as int so this header needs no cuBLAS).
[[noreturn]] void throw_cublas_error(int status, const char* expr, const char* file, int line);

// UsageError(message) for a launcher's shape check. .cu files cannot include util/error.h
// (fmt's compile-time format checks do not build under nvcc), so they throw through this.
[[noreturn]] void throw_usage_error(const std::string& message);

// The launch check: records `launcher` (the launching function, file:line) as this thread's
// last launch, then throws for a launch error. With KVSCOPE_CUDA_SYNC=1 in the environment
// (read once per process; cuda_sync_mode) it also waits for the kernel to finish, so an
// illegal address or a device assert is reported at the launch that caused it.
void check_launch(const char* launcher, const char* file, int line);
// This thread's last launch as "launch_matvec (ops/matvec.cu:170)", or "" before any.
std::string last_launch();
// Whether KVSCOPE_CUDA_SYNC=1: check_launch synchronises (the backend turns graphs off).
bool cuda_sync_mode();

}  // namespace kvscope::cuda

#define KVSCOPE_CUDA_CHECK(expr)                                                  \
  do {                                                                            \
    const cudaError_t kvscope_err_ = (expr);                                      \
    if (kvscope_err_ != cudaSuccess) {                                            \
      ::kvscope::cuda::throw_cuda_error(kvscope_err_, #expr, __FILE__, __LINE__); \
    }                                                                             \
  } while (0)

#define KVSCOPE_CUBLAS_CHECK(expr)                                                     \
  do {                                                                                 \
    const int kvscope_status_ = static_cast<int>(expr);                                \
    if (kvscope_status_ != 0) {                                                        \
      ::kvscope::cuda::throw_cublas_error(kvscope_status_, #expr, __FILE__, __LINE__); \
    }                                                                                  \
  } while (0)

// After a kernel launch: a bad grid, too much shared memory or a missing kernel image.
#define KVSCOPE_CUDA_CHECK_LAUNCH() ::kvscope::cuda::check_launch(__func__, __FILE__, __LINE__)
