// What the CUDA workspace tests share (plan/cuda_workspace.h): the steps they run, and the
// buffers the backend holds after them, each at its largest over those steps.
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "plan/cuda_workspace.h"
#include "run/engine.h"

namespace kvscope::test {

// A prompt of one full chunk and 7 tokens more (8-bit codes for 7 rows, the most below
// gemm_min_tokens, when chunk >= 8), then 4 greedy decode steps.
inline void run_chunk_then_decode(Engine& engine, std::int64_t chunk) {
  GenerationRequest r;
  for (std::int64_t i = 0; i < chunk + 7; ++i) r.prompt.push_back(1 + (i * 13) % 300);
  r.max_tokens = 4;
  r.sampling.temperature = 0;
  engine.generate(r);
}

// cuda_step_buffers of run_chunk_then_decode's steps at their largest (the prompt's chunks
// split by their keys, decode keeping its most splits), with `n_rows` logits rows a step (1
// for a whole model, 0 for a part that does not end it), then cuda_fixed_buffers for
// `max_positions`.
inline std::vector<CudaBuffer> chunk_then_decode_buffers(const ModelSpec& spec,
                                                         const CudaWorkspaceOptions& wo,
                                                         std::int64_t chunk, std::int64_t n_rows,
                                                         std::int64_t n_groups,
                                                         std::int64_t max_positions) {
  const auto splits = [&](std::int64_t t, std::int64_t keys) {
    return cuda_attention_splits(static_cast<int>(t), static_cast<int>(spec.n_heads),
                                 static_cast<int>(spec.n_kv_heads), keys, wo.sm_count);
  };
  const std::pair<std::int64_t, int> steps[] = {{chunk, splits(chunk, chunk)},
                                                {7, splits(7, chunk + 7)},
                                                {1, splits(1, std::int64_t{1} << 40)}};
  std::vector<CudaBuffer> most;
  for (const auto& [tokens, n_splits] : steps) {
    CudaStepShape shape;
    shape.n_tokens = tokens;
    shape.n_rows = n_rows;
    shape.n_splits = n_splits;
    shape.n_groups = n_groups;
    shape.blocks_capacity = 16;
    const std::vector<CudaBuffer> list = cuda_step_buffers(spec, wo, shape);
    if (most.empty()) most = list;
    for (std::size_t i = 0; i < list.size(); ++i) {
      most[i].bytes = std::max(most[i].bytes, list[i].bytes);
    }
  }
  for (const CudaBuffer& b : cuda_fixed_buffers(spec, wo, max_positions)) most.push_back(b);
  return most;
}

}  // namespace kvscope::test
