// The memory model of "what fits": weights + workspace + KV pool against a budget.
//
//   usable      = floor(total x utilisation) - used by others
//   KV budget   = usable - weights - workspace          (or a KV budget given directly)
//   KV pool     = every full-attention group gets n blocks, a sliding-window group at most
//                 its cap (window + a chunk, per sequence, for max(batch, 4) sequences);
//                 n the largest whose pools fit the KV budget (kv_blocks_per_group and
//                 kv_group_pool_blocks, the allocator's own sizing)
//   fits        = every group's busiest moment (kv_footprint) needs no more blocks than
//                 its pool, and the context is within the model's max_context
//
// Workspace, the memory a forward step needs besides weights and KV, is an estimate
// stated term by term:
//   activations = step_tokens x 4 bytes x (3 dim + 2 q_dim + 2 kv_dim + 2 ffn_dim +
//                 rope_dim): the decoder's f32 buffers per token in flight (residual,
//                 normed input and block output; Q and the attention output; K and V
//                 before they are quantized into the cache; FFN gate and up; the token's
//                 RoPE cos and sin), as the CPU backend sizes them. step_tokens =
//                 max(batch, prefill chunk): a step reads at most one chunk of prompt
//                 tokens over all sequences, or one token per sequence while decoding.
//                 Attention scores are not stored: attention runs over the cache block by
//                 block with a running softmax.
//                 On CUDA instead: every step buffer the backend allocates, at its largest
//                 over the steps the batch and chunk allow (cuda_workspace.h, the function
//                 CudaBackend sizes them with): the f32 activations, split partials, 8-bit
//                 codes, fp16 inputs of cuBLAS, step tables, less the logits counted below.
//   logits      = batch x vocab x 4 bytes: f32 logits of each sequence's last token.
//   buffers     = CPU 0; CUDA the buffers every step shares: RoPE cos / sin tables for the
//                 engine's positions (plan_engine_context: the plan's context, as an engine
//                 started for it holds), the cuBLAS workspace (32 MiB from sm_90, 4 before:
//                 the GPU's compute capability, PlanRequest::cuda, else 32) and the fp16
//                 weight slab (at most 64 MiB) cuBLAS projections dequantize into.
//   backend     = CPU 0 (the "simulated GPU" budget holds only what the engine allocates);
//                 CUDA 512 MiB for the CUDA context and the cuBLAS handle: 300-500 MiB is
//                 what a context costs on current drivers with lazy module loading (more on
//                 larger GPUs), rounded up so that a plan that says "fits" is not a few MiB
//                 short in practice.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "kv/kv_cache_config.h"
#include "model/model_spec.h"
#include "plan/cuda_workspace.h"
#include "plan/kv_footprint.h"
#include "plan/weight_footprint.h"

namespace kvscope {

enum class PlanBackend { Cpu, Cuda };

std::string_view plan_backend_name(PlanBackend backend);  // "cpu", "cuda"
std::int64_t backend_overhead_bytes(PlanBackend backend);

struct Workspace {
  std::int64_t step_tokens = 0;
  std::int64_t activations = 0;
  std::int64_t logits = 0;
  std::int64_t buffers = 0;
  std::int64_t backend = 0;
  std::int64_t total() const { return activations + logits + buffers + backend; }
};

// For CUDA with the backend's default options, one KV group of 16-token blocks and the
// model's context (the engine's own sizing of its pool uses this).
Workspace workspace_for(const ModelSpec& spec, std::int64_t batch, std::int64_t prefill_chunk,
                        PlanBackend backend);
// The same with the cache's shape (block size, groups, max_context) and the CUDA backend's
// options (ignored for the CPU).
Workspace workspace_for(const ModelSpec& spec, std::int64_t batch, std::int64_t prefill_chunk,
                        PlanBackend backend, const KvCacheConfig& kv,
                        const CudaWorkspaceOptions& cuda);
// The CUDA buffers such a workspace counts (activations + logits + buffers of it).
std::vector<CudaBuffer> cuda_plan_buffers(const ModelSpec& spec, std::int64_t batch,
                                          std::int64_t prefill_chunk, const KvCacheConfig& kv,
                                          const CudaWorkspaceOptions& cuda);

struct MemoryBudget {
  std::int64_t total_bytes = 0;  // the GPU's memory, or the simulated size on the CPU
  double utilisation = 0.90;     // fraction the engine may take (vLLM's default too)
  std::int64_t used_by_others = 0;
  // floor(total x utilisation) - used_by_others; may be negative (nothing fits).
  std::int64_t usable() const;
};

// What the KV pool may take: usable - weights - workspace, at least 0. The engine sizes
// its cache with this when given a memory budget, so the plan and the pool agree.
std::int64_t kv_budget_from(const MemoryBudget& budget, std::int64_t weight_bytes,
                            const Workspace& workspace);

struct PlanRequest {
  ModelSpec spec;
  WeightFootprint weights;
  // Layer groups, dtypes, windows, block size and max_context; the budget fields are
  // ignored (the plan computes the KV budget). See default_kv_config().
  KvCacheConfig kv;
  std::int64_t batch = 1;
  std::int64_t context = 0;          // tokens per sequence (prompt + generated)
  std::int64_t prefill_chunk = 512;  // prompt tokens per step; also the KV growth step
  PlanBackend backend = PlanBackend::Cuda;
  CudaWorkspaceOptions cuda;  // the CUDA backend's options and device (its workspace)
  // The context of the engine the plan describes (its KvCacheConfig::max_context): the
  // positions its RoPE tables and block tables hold. 0: an engine started for `context`
  // (kvscope-cli run -c CONTEXT); an engine's own request gives its context.
  std::int64_t engine_context = 0;
  MemoryBudget budget;
  // > 0: the KV pool gets exactly this (--kv-budget); weights and workspace are still
  // reported but not checked against `budget`.
  std::int64_t kv_budget_bytes = 0;
  // The exact tail (kv/exact_tail.h) the plan gives a quantized cache, sized as the engine
  // sizes it (plan/exact_tail_rule.h: kExactTailSequences sequences, steps of
  // prefill_chunk, within the KV budget). -1: the engine's default for the backend (the
  // CPU reads a tail of kDefaultExactTailBlocks, CUDA none yet); 0: the tail already in
  // `kv`, if any, as an engine's own request (check_plan) carries it.
  std::int64_t exact_tail_blocks = -1;
};

// The positions the engine a request describes holds: engine_context, else context.
std::int64_t plan_engine_context(const PlanRequest& request);

// A request with the default cache for the model (default_kv_config) and default batch,
// chunk and budget fields, for the caller to adjust.
PlanRequest make_plan_request(const ModelSpec& spec, WeightFootprint weights, KvDtype k_dtype,
                              KvDtype v_dtype, std::int64_t block_size = 16);

struct MemoryPlan {
  WeightFootprint weights;
  Workspace workspace;
  std::int64_t usable_bytes = 0;              // budget.usable(), or the KV budget when given
  std::int64_t kv_budget_bytes = 0;           // what the KV pool may take (>= 0)
  double kv_bytes_per_token = 0.0;            // before block rounding (kv_footprint.h)
  std::int64_t kv_block_set_bytes = 0;        // one block of every group
  std::int64_t kv_blocks_per_group = 0;       // n: each full group's pool the engine would build
  std::vector<std::int64_t> kv_group_blocks;  // [groups] every group's pool (window ones capped)
  std::int64_t kv_window_sequences = 0;       // sequences a window group's cap is sized for
  std::int64_t kv_exact_tail_copies = 0;      // fp16 copies of the exact tail (0: none)
  std::int64_t kv_exact_tail_bytes = 0;       // their bytes, taken from the KV budget first
  std::int64_t kv_pool_bytes = 0;  // sum of kv_group_blocks x block bytes + exact-tail bytes
  // kv.pool_bytes_needed with every window ignored (llama.cpp's --swa-full); 0 without windows
  std::int64_t kv_full_cache_bytes = 0;
  KvFootprint kv;                 // what the batch needs
  std::int64_t total_needed = 0;  // weights + workspace + kv.pool_bytes_needed
                                  // (kv.pool_bytes_needed alone with a KV budget)
  std::int64_t margin_bytes = 0;  // usable_bytes - total_needed (negative: short)
  bool within_context = false;    // context <= kv.max_context
  bool fits = false;
};

// Validates the request (UsageError naming the field: batch, context, chunk, utilisation,
// sizes) and computes the plan. Never throws for "does not fit"; that is plan.fits.
MemoryPlan plan_memory(const PlanRequest& request);

}  // namespace kvscope
