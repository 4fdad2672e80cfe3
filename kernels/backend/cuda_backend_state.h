// What a CudaBackend holds on the device and how one step runs: private to the backend's
// files, cuda_backend.cpp (the Backend interface: preparing a step, graphs, memory figures),
// cuda_backend_layers.cpp (the kernels of a step, layer by layer) and cuda_backend_part.cpp
// (the GPU's part of a split: its layer range, the residual stream in and out).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "backend/cuda_backend.h"
#include "backend/cuda_device.h"
#include "backend/device_allocator.h"
#include "backend/device_health.h"
#include "backend/device_weights.h"
#include "backend/kernel_launchers.h"
#include "backend/step_graph.h"
#include "backend/step_plan.h"
#include "cpu/rope.h"
#include "ops/gemm.h"
#include "plan/cuda_workspace.h"

namespace kvscope {

// Whether projections below gemm_min_tokens take 8-bit activations: the option, unless
// KVSCOPE_Q8_ACTIVATIONS=0 (cuda_plan_options.cpp).
bool q8_activations_on(const CudaBackendOptions& options);

// The backend's stream, destroyed however its owner's construction ends.
struct OwnedStream {
  cudaStream_t s = nullptr;
  OwnedStream();
  ~OwnedStream();
  OwnedStream(const OwnedStream&) = delete;
  OwnedStream& operator=(const OwnedStream&) = delete;
};

// UsageError unless r is a non-empty range of the model's layers.
void check_layer_range(const Model& model, const LayerRange& r);

struct CudaBackend::State {
  const Model& model;
  const ModelSpec& spec;
  // The layers run, [first_layer, end_layer): all of them, or the GPU's part of a split
  // (then the step's residual stream comes in and goes out through `x`, no embedding).
  std::int64_t first_layer = 0;
  std::int64_t end_layer = 0;
  bool whole = true;
  CudaDeviceInfo info;
  Rope rope;
  std::optional<Rope> rope_local;  // the sliding layers' (Gemma 3); nullopt: rope serves all
  cuda::DeviceAllocator alloc;
  OwnedStream owned_stream;  // before everything that enqueues on it
  cudaStream_t stream = owned_stream.s;
  cuda::DeviceModelWeights weights;
  cuda::DeviceHealth health;  // lost after a sticky error: every later step refuses at once

  std::vector<cuda::DeviceBuffer> kv_pools;  // [n_groups] [n_blocks][block_bytes]
  std::vector<std::int64_t> kv_block_bytes;  // [n_groups]
  // [n_groups] the exact tail's fp16 copies (kv/exact_tail.h), [n_shadows][copy block_bytes];
  // empty for a group that keeps none
  std::vector<cuda::DeviceBuffer> kv_shadows;
  std::vector<std::int64_t> kv_shadow_block_bytes;    // [n_groups] bytes of one copy (0: none)
  std::vector<std::string> attention_lines;           // [n_groups] attention_report()
  cuda::DeviceBuffer rope_cos, rope_sin;              // [max_positions][rope_dim / 2]
  cuda::DeviceBuffer rope_local_cos, rope_local_sin;  // the same of rope_local (else empty)
  std::int64_t rope_positions = 0;

  // Activations of one step, grown to the largest step seen. qkv holds q [T][q_dim], then
  // k [T][kv_dim], then v [T][kv_dim]; gate_up holds gate [T][ffn_dim], then up: at T = 1
  // exactly what the stacked wqkv / w_gate_up projections write in one launch.
  cuda::DeviceBuffer x, xb, qkv, att, gate_up, last, logits, partial, ints;
  cuda::DeviceBuffer picks;  // [n_rows] a greedy step's argmax ids (outside the graph)
  // A projection input as 8-bit codes [T][max_cols] and their scales [T][max_cols / 32],
  // for steps below gemm_min_tokens (quant_activations.h).
  cuda::DeviceBuffer xq, xq_scales;
  bool q8_requested = false;    // the option, unless KVSCOPE_Q8_ACTIVATIONS=0
  bool q8_activations = false;  // requested, and some projection has quantized weights
  // [n_layers] the step's KV quantization-error sums, zeroed at its start
  cuda::DeviceBuffer error_sums;
  std::vector<cuda::KvErrorSums> error_host;  // [n_layers] their copy after the step

  // Steps of at least gemm_min_tokens tokens project through cuBLAS (absent when 0).
  std::optional<cuda::ProjectionGemm> gemm;
  std::int64_t gemm_min_tokens = 0;
  std::size_t gemm_slab_bytes = 0;    // the largest fp16 slab a matrix of this model needs
  CudaWorkspaceOptions plan_options;  // what the planner sizes it with (cuda_plan_options)
  CudaWorkspaceOptions ws_options;    // what shapes the workspace (plan/cuda_workspace.h)
  std::int64_t max_cols = 0;          // the widest projection input: dim, q_dim or ffn_dim

  cuda::PinnedStaging staging;              // the step's ints on their way to `ints`
  std::optional<cuda::StepGraph> graph;     // decode steps; after `stream`, destroyed before it
  std::int64_t decode_blocks_capacity = 0;  // the decode layout's, never shrinks (step_plan.h)

  // Members go in reverse order: the graph and the cuBLAS handle before the stream.
  State(const Model& m, const CudaBackendOptions& o, CudaDeviceInfo device);

  bool ensure_kv_pools(const KvCacheManager& kv);
  std::string attention_line(const KvCacheManager& kv, std::int64_t group) const;
  bool ensure_rope_table(std::int64_t positions);
  void upload_rope_table(const Rope& r, std::int64_t positions, cuda::DeviceBuffer& cos_out,
                         cuda::DeviceBuffer& sin_out, std::string_view which);
  // Reserves every step buffer at the sizes cuda_step_buffers gives (plan/cuda_workspace.h,
  // the planner's own function), so the workspace the plan counts is what is allocated.
  void ensure_workspace(const CudaStepShape& shape);
  int prepare_step(const cuda::StepPlan& plan, const KvCacheManager& kv, bool decode);
  bool uses_gemm(std::int64_t n_tokens) const { return gemm && n_tokens >= gemm_min_tokens; }
  cuda::StepGraphKey step_key(const cuda::StepPlan& plan, const KvCacheManager& kv,
                              int n_splits) const;
  void record_quant_error(std::int64_t n_tokens, KvCacheManager& kv) const;

  // One forward step up to the logits on the device; forward / forward_greedy then queue
  // their downloads and call finish_step.
  struct StepShape {
    std::int64_t n_tokens = 0;  // 0: the step had nothing to run
    std::int64_t n_rows = 0;    // logits rows (0 for a part before the model's end)
  };
  // hidden: a part's input, uploaded into x before the launches (nullptr: embed the tokens).
  StepShape run_step(std::span<const SequenceChunk> chunks, KvCacheManager& kv,
                     const std::vector<float>* hidden = nullptr);
  bool ends_model() const { return end_layer == spec.n_layers; }

  // cuda_backend_part.cpp: a part of a split takes the residual stream, the whole model tokens
  void check_step_input(bool has_hidden) const;
  void upload_hidden(const std::vector<float>& hidden, std::int64_t n_tokens);
  void finish_step(std::int64_t n_tokens, KvCacheManager& kv);

  // cuda_backend_layers.cpp
  void launch_step(const cuda::StepPlan& plan, const KvCacheManager& kv, int n_splits);
  void attention_block(std::int64_t layer, const cuda::StepPlan& plan, const KvCacheManager& kv,
                       int n_splits);
  void ffn_block(std::int64_t layer, int n_tokens);
  void add_sublayer(const float* post_norm, int n_tokens);
  // y = W x (y += W x with accumulate) for each projection of one input x [n_tokens][cols]:
  // cuBLAS at uses_gemm(n_tokens), else the matvec kernels, with x quantized once to 8-bit
  // codes for the quantized weights when q8_activations is on.
  struct Projection {
    const cuda::DeviceWeight* w;
    float* y;
    bool accumulate = false;
  };
  // codes_ready: the kernel that wrote x wrote its 8-bit codes too (codes_for).
  void project(const float* x, int n_tokens, std::initializer_list<Projection> outs,
               bool codes_ready = false);
  bool uses_q8(const cuda::DeviceWeight& w, int n_tokens) const;
  // Where a kernel writing the input of these projections puts its 8-bit codes, or none
  // when no projection of them takes codes.
  cuda::Q8Codes codes_for(std::initializer_list<const cuda::DeviceWeight*> ws, int n_tokens);
};

}  // namespace kvscope
