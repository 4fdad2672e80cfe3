// A model larger than the GPU: layers [0, k) on a GPU backend, [k, n) on the CPU backend
// (llama.cpp's -ngl k). One step reads top to bottom:
//   hidden = embed(tokens)            on the CPU: the table stays in host memory (a gather
//                                     of T rows a step), so VRAM goes to layers
//   hidden -> GPU, layers [0, k)      the residual stream [T][dim] f32 crosses once ...
//   GPU -> hidden, layers [k, n)      ... and comes back once
//   logits = output(norm(hidden))     on the CPU, with the last layer: on the GPU the head
//                                     would take vocab x dim of VRAM and the stream would
//                                     cross a third time
// The KV cache is one KvCacheManager whose layer groups are per side
// (plan/model_layer_groups.h: split_layer_groups): the GPU's groups are marked on_device
// and their blocks live in the GPU backend's pools, the CPU's in the manager's host
// storage. Each group keeps one block table per sequence as before, so prefix sharing,
// copy-on-write, sliding windows and preemption work across the split unchanged; a
// copy-on-write of a GPU group's block is the GPU backend's to do (copy_blocks), the host
// groups' copies are done by the manager.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "run/backend.h"
#include "run/cpu_backend.h"

namespace kvscope {

// Each side of a split as the live panel draws it: its layers and where its memory goes.
struct SplitMemory {
  std::int64_t gpu_layers = 0;  // layers [0, gpu_layers) on the GPU
  std::int64_t n_layers = 0;
  MemoryInfo gpu;  // the GPU backend's: its layers' weights, their KV pools, its workspace
  MemoryInfo cpu;  // the CPU backend's: the token table, the other layers, the output head
};

// The split's memory as one device reports it (Backend::memory_info): its GPU's side, the
// device named with the layers it runs.
MemoryInfo split_device_memory(const SplitMemory& split);

class SplitBackend final : public Backend {
 public:
  // gpu runs layers [0, k) (its layer_range()), cpu [k, n_layers); UsageError otherwise.
  SplitBackend(std::unique_ptr<Backend> gpu, std::unique_ptr<CpuBackend> cpu);

  // "<GPU backend> + <CPU backend>, 12/30 layers on the GPU"
  std::string name() const override;
  void forward(std::span<const SequenceChunk> chunks, KvCacheManager& kv,
               std::vector<float>& logits) override;
  // Host storage for the CPU's groups; the GPU's are on_device (kv_cache_config.h).
  bool uses_host_kv_storage() const override { return true; }
  void copy_blocks(std::span<const BlockCopy> copies) override { gpu_->copy_blocks(copies); }
  // The GPU's side: the device memory the budget is of (gpu_memory_info); the CPU's side is
  // cpu_memory_info.
  MemoryInfo memory_info(const KvCacheManager& kv) const override;
  std::optional<DeviceMemory> device_memory() const override { return gpu_->device_memory(); }
  std::optional<CudaWorkspaceOptions> cuda_plan_options() const override {
    return gpu_->cuda_plan_options();
  }

  std::int64_t gpu_layers() const { return gpu_layers_; }
  std::int64_t n_layers() const { return n_layers_; }
  const Backend& gpu() const { return *gpu_; }
  const CpuBackend& cpu() const { return *cpu_; }
  MemoryInfo gpu_memory_info(const KvCacheManager& kv) const { return gpu_->memory_info(kv); }
  MemoryInfo cpu_memory_info(const KvCacheManager& kv) const { return cpu_->memory_info(kv); }
  SplitMemory split_memory(const KvCacheManager& kv) const {
    return {gpu_layers_, n_layers_, gpu_memory_info(kv), cpu_memory_info(kv)};
  }

 private:
  std::unique_ptr<Backend> gpu_;
  std::unique_ptr<CpuBackend> cpu_;
  std::int64_t gpu_layers_ = 0;
  std::int64_t n_layers_ = 0;
  std::vector<float> hidden_;  // [n_tokens][dim] the residual stream between the sides
};

}  // namespace kvscope
