// The CUDA backend: the decoder of cpu_backend.h on an NVIDIA GPU. Weights live on the
// device (device_weights.h), the KV cache bytes too (the KvCacheManager keeps only the
// bookkeeping, host_storage = false, and block ids mean the same blocks on both sides), and
// every step runs the kernels of kernel_launchers.h on one stream; decode steps as a CUDA
// graph (step_graph.h) when they can.
//
// CUDA-free header: the app includes it to build the backend without CUDA headers.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "backend/cuda_device.h"
#include "model/model.h"
#include "plan/cuda_workspace.h"
#include "run/backend.h"

namespace kvscope {

struct CudaBackendOptions {
  int device = 0;
  std::int64_t context_length = 0;  // the context the engine runs at (RoPE scaling); 0: model's
  // F32 matrices go to the device as fp16 (half the bytes, what a user wants); false keeps
  // them f32 so a comparison with the CPU decoder sees only summation-order differences.
  bool f32_weights_as_f16 = true;
  // Decode steps (every chunk one token) as one CUDA graph per step shape, replayed with new
  // token ids, positions and block tables (step_graph.h). Also off when the environment has
  // KVSCOPE_CUDA_GRAPHS=0. Results are bit-identical either way; prompt chunks run eagerly.
  bool cuda_graphs = true;
  // Steps of at least this many tokens (prompt chunks, large decode batches) run their
  // projections through cuBLAS with fp16 activations and fp32 accumulation (gemm.h), reading
  // each weight once per step; smaller ones use the f32 matvec kernels, which read it once
  // per token. 0: never cuBLAS (exact comparisons with the CPU decoder).
  std::int64_t gemm_min_tokens = 8;
  // Smaller steps multiply quantized weights with the activations as 8-bit codes, in integer
  // dot products (quant_activations.h; llama.cpp's CUDA backend does the same): a few
  // instructions per 4 weights, so decode stays bandwidth-bound on GPUs with many bytes per
  // SM clock. Results then differ from the CPU decoder's by the codes' rounding (at most
  // sum |w| d / 2 a projection). Off: the f32 matvec kernels (exact comparisons), also with
  // KVSCOPE_Q8_ACTIVATIONS=0. F32 and F16 weights always use the f32 kernels.
  bool q8_activations = true;
  // The layers this backend runs (run/backend.h): the whole model, or the GPU's part of a
  // model split with the CPU (run/split_backend.h), which takes and hands on the residual
  // stream through forward_layers and holds only its layers' weights and KV groups.
  LayerRange layers;
};

// How the decode steps of a CudaBackend ran so far.
struct CudaGraphReport {
  bool enabled = false;
  std::string off_reason;           // why graphs are off: the option, or what failed
  std::int64_t eager_steps = 0;     // decode steps launched kernel by kernel
  std::int64_t graph_steps = 0;     // decode steps launched as one graph
  std::int64_t captures = 0;        // graphs captured (a new shape, seen twice in a row)
  std::int64_t updates = 0;         // captures applied to the executable graph in place
  std::int64_t instantiations = 0;  // captures that needed a new executable graph
};

class CudaBackend final : public Backend {
 public:
  // Uploads the weights. Throws Error (CapacityError when the device is too small,
  // ModelError for a tensor type without a kernel) naming what failed.
  CudaBackend(const Model& model, const CudaBackendOptions& options);
  ~CudaBackend() override;

  // "CUDA (<device>)", plus ", f32 activations" without 8-bit activation codes and
  // ", CUDA graphs off: <reason>" when decode steps run eagerly.
  std::string name() const override;
  CudaGraphReport graph_report() const;
  // Which paged attention kernel each layer group's layers run and why, one line a group
  // ("layer group 0: generic kernel (head_dim is not 64, 96, 128 or 256), 3 query heads per
  // CTA in 1 tile, 2.1 KiB shared memory of 99.0 KiB"); empty before the first step.
  std::vector<std::string> attention_report() const;
  // What shapes this backend's workspace (plan/cuda_workspace.h): its options, its weights'
  // types and its device. cuda_step_buffers of each step with these is what it reserves.
  CudaWorkspaceOptions workspace_options() const;
  void forward(std::span<const SequenceChunk> chunks, KvCacheManager& kv,
               std::vector<float>& logits) override;
  // The logits stay on the device: an argmax kernel picks, one int per row comes back.
  void forward_greedy(std::span<const SequenceChunk> chunks, KvCacheManager& kv,
                      std::vector<TokenId>& picks) override;
  LayerRange layer_range() const override;
  // The GPU's part of a split: hidden goes to the device before the step's launches and
  // comes back after them (or the logits, for a part that ends the model).
  void forward_layers(std::span<const SequenceChunk> chunks, KvCacheManager& kv,
                      std::vector<float>& hidden, std::vector<float>& logits) override;
  void copy_blocks(std::span<const BlockCopy> copies) override;
  bool uses_host_kv_storage() const override { return false; }
  MemoryInfo memory_info(const KvCacheManager& kv) const override;
  std::optional<DeviceMemory> device_memory() const override;
  std::optional<CudaWorkspaceOptions> cuda_plan_options() const override;

 private:
  struct State;
  std::unique_ptr<State> s_;
};

// The workspace options the planner sizes a backend of these options on `device` with, before
// it exists (the factory resolving --gpu-layers) and after (cuda_plan_options): the device's
// compute capability (its cuBLAS workspace) and SMs (the attention splits), the GEMM
// threshold, the 8-bit codes as asked (the option and KVSCOPE_Q8_ACTIVATIONS) and the fp16
// slab of the model's largest projection (gemm_slab_bytes -1), so both answer alike.
CudaWorkspaceOptions cuda_plan_workspace_options(const CudaBackendOptions& options,
                                                 const CudaDeviceInfo& device);

// The factory the app registers: a CudaBackend, or nullptr with the reason in *why (no
// driver, no device, a weight type without a kernel, too little memory). Never throws.
std::unique_ptr<Backend> make_cuda_backend(const Model& model, const CudaBackendOptions& options,
                                           std::string* why);

}  // namespace kvscope
