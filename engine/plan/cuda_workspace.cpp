#include "plan/cuda_workspace.h"

#include <algorithm>
#include <bit>
#include <limits>

namespace kvscope {

namespace {

constexpr int kMaxSplits = 128;
constexpr int kSplitCtasPerSm = 3;
constexpr int kSplitCtasPerSmWideTile = 2;  // tiles of 5..8 query heads
constexpr std::int64_t kMinKeysPerSplit = 64;
constexpr std::int64_t kKvErrorSumsBytes = 4 * 8;  // kernel_launchers.h KvErrorSums: 4 doubles
constexpr std::int64_t kMinBlocksCapacity = 16;    // step_plan.h

std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
  return (a + b - 1) / b;
}

// The widest projection input: dim, q_dim or ffn_dim.
std::int64_t max_cols(const ModelSpec& s) {
  return std::max({s.dim, s.q_dim(), s.ffn_dim});
}

// cuda_gemm_slab_bytes of the spec's largest projection (its rows x cols, whichever type),
// the output head's (vocab x dim) included or not.
std::int64_t spec_slab_bytes(const ModelSpec& s, bool output_head = true) {
  std::int64_t most = output_head ? cuda_gemm_slab_bytes(s.vocab_size, s.dim) : 0;
  const std::int64_t shapes[][2] = {{s.q_dim(), s.dim},    {s.kv_dim(), s.dim},
                                    {s.dim, s.q_dim()},    {s.ffn_dim, s.dim},
                                    {s.dim, s.ffn_dim},    {s.q_dim() + 2 * s.kv_dim(), s.dim},
                                    {2 * s.ffn_dim, s.dim}};
  for (const auto& rc : shapes) most = std::max(most, cuda_gemm_slab_bytes(rc[0], rc[1]));
  return most;
}

bool uses_gemm(const CudaWorkspaceOptions& o, std::int64_t rows) {
  return o.gemm_min_tokens > 0 && rows >= o.gemm_min_tokens;
}

}  // namespace

int cuda_attention_splits(int n_tokens, int n_heads, int n_kv_heads, std::int64_t max_keys,
                          int sm_count) {
  // The fast kernel's CTAs: query heads in tiles of up to 8 per KV head; a tile of more than
  // 4 heads needs the registers of two CTAs' worth of residency per SM instead of three.
  const int group = std::max(1, n_heads / std::max(1, n_kv_heads));
  const int tiles = (group + 7) / 8;
  const int per_sm = std::min(group, 8) > 4 ? kSplitCtasPerSmWideTile : kSplitCtasPerSm;
  const std::int64_t ctas =
      std::max<std::int64_t>(1, static_cast<std::int64_t>(n_tokens) * n_kv_heads * tiles);
  // rounded down: one more CTA than the SMs hold would run as a second wave
  const std::int64_t want = per_sm * static_cast<std::int64_t>(sm_count) / ctas;
  const std::int64_t by_keys = max_keys / kMinKeysPerSplit;
  return static_cast<int>(
      std::max<std::int64_t>(1, std::min({want, by_keys, std::int64_t{kMaxSplits}})));
}

std::int64_t cuda_attention_partial_floats(int n_tokens, int n_heads, int head_dim, int n_splits) {
  if (n_splits <= 1) return 0;
  return static_cast<std::int64_t>(n_tokens) * n_heads * n_splits * (head_dim + 2);
}

std::int64_t cublas_workspace_bytes(int compute_major) {
  return (compute_major >= 9 ? std::int64_t{32} : std::int64_t{4}) << 20;
}

std::int64_t cuda_gemm_slab_rows(std::int64_t rows, std::int64_t cols, std::int64_t scratch_bytes) {
  const std::int64_t row_bytes = std::max<std::int64_t>(cols, 1) * 2;
  return std::clamp<std::int64_t>(scratch_bytes / row_bytes, 1, std::max<std::int64_t>(rows, 1));
}

std::int64_t cuda_gemm_slab_bytes(std::int64_t rows, std::int64_t cols,
                                  std::int64_t scratch_bytes) {
  return cuda_gemm_slab_rows(rows, cols, scratch_bytes) * cols * 2;
}

std::int64_t cuda_layer_slab_bytes(const ModelSpec& spec) {
  return spec_slab_bytes(spec, false);
}

std::int64_t cuda_step_table_ints(const CudaStepShape& s) {
  return 2 * s.n_tokens + s.n_rows + s.n_groups * (2 * s.n_tokens + s.blocks_capacity) +
         s.n_tail_groups * s.blocks_capacity;
}

std::vector<CudaBuffer> cuda_step_buffers(const ModelSpec& spec, const CudaWorkspaceOptions& o,
                                          const CudaStepShape& shape) {
  const std::int64_t T = shape.n_tokens, R = shape.n_rows, f = 4;
  // the layers' projections take T rows, the logits' R: either may be below the GEMM's
  std::int64_t q8_rows = 0;
  for (const std::int64_t rows : {T, R}) {
    if (!uses_gemm(o, rows)) q8_rows = std::max(q8_rows, rows);
  }
  const std::int64_t codes = o.q8_activations ? q8_rows * max_cols(spec) : 0;
  const std::int64_t partial =
      cuda_attention_partial_floats(static_cast<int>(T), static_cast<int>(spec.n_heads),
                                    static_cast<int>(spec.head_dim), shape.n_splits);
  return {
      {"activations x", T * spec.dim * f},
      {"activations xb", T * spec.dim * f},
      {"activations q, k, v", T * (spec.q_dim() + 2 * spec.kv_dim()) * f},
      {"attention output", T * spec.q_dim() * f},
      {"ffn gate and up", 2 * T * spec.ffn_dim * f},
      {"final hidden states", R * spec.dim * f},
      {"logits", R * spec.vocab_size * f},
      {"attention split partials", std::max<std::int64_t>(partial, 1) * f},
      {"KV quantization error sums", spec.n_layers * kKvErrorSumsBytes},
      {"8-bit activation codes", codes},
      {"8-bit activation scales", codes / 32 * f},
      {"fp16 activations for cuBLAS", uses_gemm(o, T) ? T * max_cols(spec) * 2 : 0},
      {"step tables", cuda_step_table_ints(shape) * 4},
      {"greedy picks", R * 4},
  };
}

std::vector<CudaBuffer> cuda_fixed_buffers(const ModelSpec& spec, const CudaWorkspaceOptions& o,
                                           std::int64_t max_positions) {
  const std::int64_t table = max_positions * (spec.rope_dim / 2) * 4;
  const bool gemm = o.gemm_min_tokens > 0;
  const std::int64_t slab = o.gemm_slab_bytes < 0 ? spec_slab_bytes(spec) : o.gemm_slab_bytes;
  const std::int64_t local = spec.has_local_rope() ? table : 0;  // the sliding layers' own
  return {
      {"RoPE cos table", table},
      {"RoPE sin table", table},
      {"RoPE cos table (sliding layers)", local},
      {"RoPE sin table (sliding layers)", local},
      {"cuBLAS workspace", gemm ? cublas_workspace_bytes(o.compute_major) : 0},
      {"fp16 weight slab for cuBLAS", gemm ? slab : 0},
  };
}

std::vector<CudaBuffer> cuda_workspace_buffers(const ModelSpec& spec, const CudaWorkspaceOptions& o,
                                               const CudaWorkspaceRequest& r) {
  const std::int64_t positions = r.max_positions > 0 ? r.max_positions : spec.context_length;
  CudaStepShape shape;
  shape.n_groups = r.n_groups;
  shape.n_tail_groups = r.n_tail_groups;
  const std::int64_t per_seq = ceil_div(positions, std::max<std::int64_t>(r.block_size, 1));
  const std::int64_t most_blocks = std::max(kMinBlocksCapacity, r.max_sequences * per_seq);
  shape.blocks_capacity =
      static_cast<std::int64_t>(std::bit_ceil(static_cast<std::uint64_t>(most_blocks)));
  // Each buffer grows with the step's tokens and rows except the codes (only below
  // gemm_min_tokens: most at gemm_min_tokens - 1) and the split partials (only while a step
  // has under 2 x sm_count tokens): those sizes and the largest step cover every maximum.
  std::vector<std::int64_t> sizes = {r.max_step_tokens, o.gemm_min_tokens - 1};
  for (std::int64_t t = 1; t <= 2 * std::int64_t{o.sm_count}; ++t) sizes.push_back(t);
  std::vector<CudaBuffer> most;
  const auto take = [&](const std::vector<CudaBuffer>& step) {
    if (most.empty()) most = step;
    for (std::size_t i = 0; i < step.size(); ++i) {
      most[i].bytes = std::max(most[i].bytes, step[i].bytes);
    }
  };
  const auto splits = [&](std::int64_t t, std::int64_t keys) {
    return cuda_attention_splits(static_cast<int>(t), static_cast<int>(spec.n_heads),
                                 static_cast<int>(spec.n_kv_heads), keys, o.sm_count);
  };
  for (const std::int64_t t : sizes) {
    if (t < 1 || t > r.max_step_tokens) continue;
    shape.n_tokens = t;
    shape.n_rows = std::min(t, r.logits_rows);
    // a prompt step splits by its keys (at most max_positions) ...
    shape.n_splits = splits(t, positions);
    take(cuda_step_buffers(spec, o, shape));
    // ... a decode step (one token per sequence) keeps room for its most splits
    if (t <= r.max_sequences) {
      shape.n_splits = splits(t, std::numeric_limits<int>::max());
      take(cuda_step_buffers(spec, o, shape));
    }
  }
  for (const CudaBuffer& b : cuda_fixed_buffers(spec, o, positions)) most.push_back(b);
  return most;
}

std::int64_t total_bytes(const std::vector<CudaBuffer>& buffers) {
  std::int64_t n = 0;
  for (const CudaBuffer& b : buffers) n += b.bytes;
  return n;
}

}  // namespace kvscope
