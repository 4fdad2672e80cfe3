#include "backend/cuda_check.h"

#include <cstdlib>
#include <cstring>
#include <string_view>

#include "backend/device_health.h"
#include "util/error.h"

namespace kvscope::cuda {

namespace {

// This thread's last launch: string literals (__func__, __FILE__), so recording costs three
// stores per launch.
struct LaunchSite {
  const char* launcher = nullptr;
  const char* file = nullptr;
  int line = 0;
};
thread_local LaunchSite t_last_launch;

// The path from the last kernels/ folder on ("ops/matvec.cu"), or the whole path.
const char* short_path(const char* file) {
  const char* after = nullptr;
  for (const char* at = std::strstr(file, "kernels/"); at; at = std::strstr(at + 1, "kernels/")) {
    after = at + std::strlen("kernels/");
  }
  return after ? after : file;
}

}  // namespace

bool cuda_sync_mode() {
  static const bool on = [] {
    const char* v = std::getenv("KVSCOPE_CUDA_SYNC");
    const std::string_view s = v ? v : "";
    return s == "1" || s == "on" || s == "true";
  }();
  return on;
}

void check_launch(const char* launcher, const char* file, int line) {
  t_last_launch = {launcher, file, line};
  const cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) throw_cuda_error(err, "the launch check", file, line);
  if (cuda_sync_mode()) {
    const cudaError_t run = cudaDeviceSynchronize();
    if (run != cudaSuccess)
      throw_cuda_error(run, "cudaDeviceSynchronize (KVSCOPE_CUDA_SYNC=1)", file, line);
  }
}

std::string last_launch() {
  const LaunchSite& s = t_last_launch;
  if (!s.launcher) return {};
  return fmt::format("{} ({}:{})", s.launcher, short_path(s.file), s.line);
}

void throw_cuda_error(cudaError_t err, const char* expr, const char* file, int line) {
  cudaGetLastError();  // clear a non-sticky error so the next call starts clean
  if (err == cudaErrorMemoryAllocation) {
    throw_error<CapacityError>("CUDA out of device memory in {} ({}:{})", expr, file, line);
  }
  throw CudaError(static_cast<int>(err),
                  fmt::format("CUDA error {} ({}) in {} ({}:{})", cudaGetErrorName(err),
                              cudaGetErrorString(err), expr, short_path(file), line));
}

void throw_cublas_error(int status, const char* expr, const char* file, int line) {
  throw_error<Error>("cuBLAS error status {} in {} ({}:{})", status, expr, file, line);
}

void throw_usage_error(const std::string& message) {
  throw UsageError(message);
}

}  // namespace kvscope::cuda
