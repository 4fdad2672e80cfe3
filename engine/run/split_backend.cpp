#include "run/split_backend.h"

#include <fmt/format.h>

#include "util/error.h"

namespace kvscope {

SplitBackend::SplitBackend(std::unique_ptr<Backend> gpu, std::unique_ptr<CpuBackend> cpu)
    : gpu_(std::move(gpu)), cpu_(std::move(cpu)) {
  if (!gpu_ || !cpu_) throw_error<UsageError>("split backend: a side is missing");
  const LayerRange g = gpu_->layer_range();
  const LayerRange c = cpu_->layer_range();
  n_layers_ = c.end;
  gpu_layers_ = g.end;
  if (g.begin != 0 || g.end <= 0 || c.begin != g.end || c.end <= c.begin) {
    throw_error<UsageError>(
        "split backend: the GPU must run layers [0, k) and the CPU [k, n); got [{}, {}) and "
        "[{}, {})",
        g.begin, g.end, c.begin, c.end);
  }
}

std::string SplitBackend::name() const {
  return fmt::format("{} + {}, {}/{} layers on the GPU", gpu_->name(), cpu_->name(), gpu_layers_,
                     n_layers_);
}

void SplitBackend::forward(std::span<const SequenceChunk> chunks, KvCacheManager& kv,
                           std::vector<float>& logits) {
  cpu_->embed_tokens(chunks, hidden_);
  if (hidden_.empty()) {
    logits.clear();
    return;
  }
  gpu_->forward_layers(chunks, kv, hidden_, logits);  // layers [0, k): hidden in, hidden out
  cpu_->forward_layers(chunks, kv, hidden_, logits);  // layers [k, n) and the logits
}

MemoryInfo split_device_memory(const SplitMemory& split) {
  MemoryInfo info = split.gpu;
  info.device = fmt::format("{} ({}/{} layers; the rest on the CPU)", info.device, split.gpu_layers,
                            split.n_layers);
  return info;
}

MemoryInfo SplitBackend::memory_info(const KvCacheManager& kv) const {
  return split_device_memory({gpu_layers_, n_layers_, gpu_->memory_info(kv), MemoryInfo{}});
}

}  // namespace kvscope
