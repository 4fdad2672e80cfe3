// The CUDA backend's device memory besides the weights and the KV pool, as pure functions of
// the model and the backend's options: the planner counts these buffers (workspace_for,
// PlanBackend::Cuda) and CudaBackend sizes its buffers from the same functions
// (kernels/backend/cuda_backend.cpp ensure_workspace), so the plan's workspace is what the
// device holds. The CUDA context itself (driver, module images, cuBLAS handle) is not
// allocated through the backend; the planner adds an estimate for it (backend_overhead_bytes).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "model/model_spec.h"

namespace kvscope {

// --- Attention splits (the paged attention kernels' partial results) --------------------

// Splits of each token's keys that fill the GPU in one wave: about three CTAs per SM (two
// for tiles of 5..8 query heads), at least 64 keys each, at most 128.
int cuda_attention_splits(int n_tokens, int n_heads, int n_kv_heads, std::int64_t max_keys,
                          int sm_count);
// Floats of the split partials: [n_tokens][n_heads][n_splits][head_dim + 2]; 0 for one split.
std::int64_t cuda_attention_partial_floats(int n_tokens, int n_heads, int head_dim, int n_splits);

// cuBLAS's recommended workspace (cublasSetWorkspace): 32 MiB from sm_90 on, 4 MiB before.
std::int64_t cublas_workspace_bytes(int compute_major);

// The fp16 scratch a cuBLAS projection dequantizes a slab of weight rows into: at most this.
inline constexpr std::int64_t kCudaGemmWeightScratchBytes = std::int64_t{64} << 20;
// Its slab for a matrix of rows x cols: as many whole rows as fit the scratch (at least one),
// as fp16 (gemm.h gemm_slab_rows).
std::int64_t cuda_gemm_slab_rows(std::int64_t rows, std::int64_t cols,
                                 std::int64_t scratch_bytes = kCudaGemmWeightScratchBytes);
std::int64_t cuda_gemm_slab_bytes(std::int64_t rows, std::int64_t cols,
                                  std::int64_t scratch_bytes = kCudaGemmWeightScratchBytes);
// The largest slab of the spec's layer projections (q, k, v, o, gate, up, down, and the fused
// qkv and gate-up), leaving out the output head (vocab x dim): what a GPU part of a split
// before the model's end needs at most.
std::int64_t cuda_layer_slab_bytes(const ModelSpec& spec);

// --- The buffers ----------------------------------------------------------------------

// What of CudaBackendOptions and the device shapes the workspace. The defaults are the
// backend's defaults on the largest case: every projection quantized (8-bit activation
// codes and an fp16 slab as large as the largest projection allows), sm_90's cuBLAS
// workspace and 132 SMs of split partials.
struct CudaWorkspaceOptions {
  std::int64_t gemm_min_tokens = 8;  // steps of this many tokens use cuBLAS; 0: never
  bool q8_activations = true;        // requested, and some projection has quantized weights
  // The largest fp16 slab any projection needs (cuda_gemm_slab_bytes of each non-F16 device
  // matrix); < 0: that of the largest projection of the spec (vocab x dim, ffn_dim x dim, ...).
  std::int64_t gemm_slab_bytes = -1;
  int compute_major = 9;
  int sm_count = 132;
};

// One step's shape, as the backend reserves for it.
struct CudaStepShape {
  std::int64_t n_tokens = 1;
  std::int64_t n_rows = 1;            // rows of logits
  int n_splits = 1;                   // attention splits the partials hold room for
  std::int64_t n_groups = 1;          // KV layer groups
  std::int64_t blocks_capacity = 16;  // ints each group's block tables take (step_plan.h)
  std::int64_t n_tail_groups = 0;     // groups with an exact tail: a shadow section each
};

struct CudaBuffer {
  std::string_view what;  // the name the backend allocates it under
  std::int64_t bytes = 0;
};

// The buffers one step needs, in this order: activations x, activations xb, activations q, k,
// v, attention output, ffn gate and up, final hidden states, logits, attention split
// partials, KV quantization error sums, 8-bit activation codes, 8-bit activation scales, fp16
// activations for cuBLAS, step tables, greedy picks. A buffer the step does not use is there
// with 0 bytes (the codes above gemm_min_tokens, the cuBLAS activations below it).
std::vector<CudaBuffer> cuda_step_buffers(const ModelSpec& spec, const CudaWorkspaceOptions& o,
                                          const CudaStepShape& shape);
// Ints of a step's packed tables (step_plan.h): tokens, positions, logit rows, then per
// group first, table start and its block tables padded to blocks_capacity, and as many
// exact-tail shadow indices for each group that keeps an exact tail.
std::int64_t cuda_step_table_ints(const CudaStepShape& shape);

// The buffers every step shares: RoPE cos and sin tables [max_positions][rope_dim / 2] f32
// (a second pair for the sliding layers where they have their own RoPE, Gemma 3), the cuBLAS
// workspace and the fp16 weight slab (both absent with gemm_min_tokens 0).
std::vector<CudaBuffer> cuda_fixed_buffers(const ModelSpec& spec, const CudaWorkspaceOptions& o,
                                           std::int64_t max_positions);

// The most the backend holds after steps of up to max_step_tokens tokens over up to
// max_sequences sequences, each returning up to logits_rows rows, at max_positions positions
// of block_size tokens in n_groups groups: every buffer at its largest over those steps (the
// backend grows each to the largest step seen and never shrinks it), then the fixed ones.
// Prompt steps split their attention by their keys (at most max_positions), decode steps of
// up to max_sequences tokens keep room for their most splits (CudaBackend::prepare_step).
struct CudaWorkspaceRequest {
  std::int64_t max_step_tokens = 512;
  std::int64_t max_sequences = 1;
  std::int64_t logits_rows = 1;
  std::int64_t max_positions = 0;  // 0: the model's context length
  std::int64_t block_size = 16;
  std::int64_t n_groups = 1;
  std::int64_t n_tail_groups = 0;  // of them, those keeping an exact tail (kv/exact_tail.h)
};
std::vector<CudaBuffer> cuda_workspace_buffers(const ModelSpec& spec, const CudaWorkspaceOptions& o,
                                               const CudaWorkspaceRequest& r);

std::int64_t total_bytes(const std::vector<CudaBuffer>& buffers);

}  // namespace kvscope
