// `kvscope-cli devices`: which backends this machine can run, and why CUDA is not one of
// them when it is not.
#include <fmt/format.h>

#include <thread>

#include "cli/arg_parser.h"
#include "cli/command.h"

#ifdef KVSCOPE_HAVE_CUDA
#include "backend/cuda_device.h"
#endif

namespace kvscope::cli {

int cmd_devices(const Args& args) {
  ArgParser p("devices", "");
  if (!p.parse(args)) return 0;
  fmt::print("cpu: available, {} hardware threads\n", std::thread::hardware_concurrency());
#ifdef KVSCOPE_HAVE_CUDA
  const CudaDeviceInfo info = probe_cuda_device();
  if (info.available) {
    fmt::print("cuda: {} (sm_{}{}), {} SMs, {:.1f} GiB total, {:.1f} GiB free\n", info.name,
               info.compute_major, info.compute_minor, info.sm_count,
               static_cast<double>(info.total_bytes) / (1ull << 30),
               static_cast<double>(info.free_bytes) / (1ull << 30));
    fmt::print("cuda: {}\n", describe_attention_rules(info));
  } else {
    fmt::print("cuda: unavailable: {}\n", info.reason);
  }
#else
  fmt::print("cuda: unavailable: this build has no CUDA backend (no CUDA toolkit at build time)\n");
#endif
  return 0;
}

}  // namespace kvscope::cli
