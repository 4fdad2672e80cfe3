#include "cli/copy_bandwidth.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#ifdef KVSCOPE_HAVE_CUDA
#include "bench/device_copy_bandwidth.h"
#endif

namespace kvscope::cli {

// 2 x 256 MiB, far beyond any cache; each thread copies its own slice, `reps` times.
double measure_host_copy_bandwidth(int threads) {
  constexpr std::size_t kBytes = std::size_t{256} << 20;
  constexpr int kReps = 8;
  const auto n = static_cast<std::size_t>(std::max(1, threads));
  std::vector<char> src(kBytes, 1), dst(kBytes, 0);
  const std::size_t slice = kBytes / n;
  auto copy_all = [&](int reps) {
    std::vector<std::thread> pool;
    for (std::size_t t = 0; t < n; ++t) {
      pool.emplace_back([&, t] {
        for (int r = 0; r < reps; ++r) std::memcpy(&dst[t * slice], &src[t * slice], slice);
      });
    }
    for (auto& th : pool) th.join();
  };
  copy_all(1);  // warm-up: pages mapped
  const auto start = std::chrono::steady_clock::now();
  copy_all(kReps);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return 2.0 * static_cast<double>(slice * n) * kReps / s / 1e9;
}

double measure_gpu_copy_bandwidth() {
#ifdef KVSCOPE_HAVE_CUDA
  return measure_device_copy_bandwidth();
#else
  return 0.0;
#endif
}

double measure_copy_bandwidth(const Engine& engine, int cpu_threads) {
#ifdef KVSCOPE_HAVE_CUDA
  if (!engine.backend().uses_host_kv_storage()) return measure_device_copy_bandwidth();
#endif
  (void)engine;
  return measure_host_copy_bandwidth(cpu_threads);
}

}  // namespace kvscope::cli
