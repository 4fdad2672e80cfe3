// What CUDA device, if any, this process can use. Plain C++ (no CUDA headers), so the app
// can ask without knowing anything about CUDA, and a machine with no driver gets a reason.
#pragma once

#include <cstdint>
#include <string>

namespace kvscope {

struct CudaDeviceInfo {
  bool available = false;
  std::string reason;  // why not available ("no NVIDIA driver", "no CUDA device", ...)
  int device = -1;
  std::string name;
  int compute_major = 0;
  int compute_minor = 0;
  int sm_count = 0;
  // shared memory a CTA may opt in to (cudaDevAttrMaxSharedMemoryPerBlockOptin): what bounds
  // the generic attention kernel's head tiles (paged_attention_choice.cuh)
  std::uint64_t shared_memory_per_block_optin = 0;
  std::uint64_t total_bytes = 0;
  std::uint64_t free_bytes = 0;
};

// Queries device 0 (or `device`). Never throws and never aborts.
CudaDeviceInfo probe_cuda_device(int device = 0);

// Which paged attention kernel runs which layers on this device, in words for `devices`:
// the fast kernel's head dims, the generic kernel for the rest with its head tiles bounded by
// the device's shared memory, and KVSCOPE_ATTENTION_KERNEL=generic when it is set.
std::string describe_attention_rules(const CudaDeviceInfo& info);

}  // namespace kvscope
