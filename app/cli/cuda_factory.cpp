// The CUDA backend factory of this build. With kernels/ built it probes the device, so
// every command gives the same answer to "why is CUDA not used": no driver, no device,
// or (until the CUDA decoder lands) that the decoder is not in this build yet.
#include "cli/engine_args.h"

#ifdef KVSCOPE_HAVE_CUDA
#include "cuda_device.h"
#endif

namespace kvscope::cli {

BackendFactory cuda_backend_factory() {
#ifdef KVSCOPE_HAVE_CUDA
  return [](const Model&, const EngineOptions&, std::string* why) -> std::unique_ptr<Backend> {
    const CudaDeviceInfo info = probe_cuda_device();
    if (!info.available) {
      *why = info.reason;
    } else {
      *why = "found " + info.name + ", but this build has no CUDA decoder yet";
    }
    return nullptr;
  };
#else
  return {};
#endif
}

}  // namespace kvscope::cli
