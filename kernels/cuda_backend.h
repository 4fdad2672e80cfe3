// The CUDA backend: the decoder of cpu_backend.h on an NVIDIA GPU. Weights live on the
// device (device_weights.h), the KV cache bytes too (the KvCacheManager keeps only the
// bookkeeping, host_storage = false, and block ids mean the same blocks on both sides), and
// every step runs the kernels of kernel_launchers.h on one stream.
//
// CUDA-free header: the app includes it to build the backend without CUDA headers.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "model/model.h"
#include "run/backend.h"

namespace kvscope {

struct CudaBackendOptions {
  int device = 0;
  std::int64_t context_length = 0;  // the context the engine runs at (RoPE scaling); 0: model's
  // F32 matrices go to the device as fp16 (half the bytes, what a user wants); false keeps
  // them f32 so a comparison with the CPU decoder sees only summation-order differences.
  bool f32_weights_as_f16 = true;
};

class CudaBackend final : public Backend {
 public:
  // Uploads the weights. Throws Error (CapacityError when the device is too small,
  // ModelError for a tensor type without a kernel) naming what failed.
  CudaBackend(const Model& model, const CudaBackendOptions& options);
  ~CudaBackend() override;

  std::string name() const override;
  void forward(std::span<const SequenceChunk> chunks, KvCacheManager& kv,
               std::vector<float>& logits) override;
  void copy_blocks(std::span<const BlockCopy> copies) override;
  bool uses_host_kv_storage() const override { return false; }
  MemoryInfo memory_info(const KvCacheManager& kv) const override;
  std::optional<DeviceMemory> device_memory() const override;

 private:
  struct State;
  std::unique_ptr<State> s_;
};

// The factory the app registers: a CudaBackend, or nullptr with the reason in *why (no
// driver, no device, a weight type without a kernel, too little memory). Never throws.
std::unique_ptr<Backend> make_cuda_backend(const Model& model, const CudaBackendOptions& options,
                                           std::string* why);

}  // namespace kvscope
