// The vLLM releases whose memory accounting the vLLM memory model (vllm_memory.h) follows,
// and what changes between them. Every release sizes its KV pool the same way:
//
//   KV bytes = gpu_memory_utilization x total GPU memory (cudaMemGetInfo's total, not free)
//              - weights - non-torch memory - the activation peak of a profiling forward pass
//
// What differs is the profiling batch, the defaults that size it, the sampler that ends it
// and what "non-torch" memory counts:
//
//   release          engine  profile batch (tokens)            sampler peak  non-torch, 1 GPU
//   0.6.0 - 0.6.4    V0      max(max_model_len, 2048), or 512  sort, 9.5     0.35 GiB (a)
//                            with chunked prefill (default on
//                            above a 32k max_model_len)
//   0.6.5 - 0.6.6    V0      the same                          sort, 9.5     1.79 GiB x TP (b)
//   0.7 - 0.9 (V0)   V0      the same, chunked batch 2048      sort, 9.5     0.15 GiB (c)
//   0.8 - 0.10 (V1)  V1      max_num_batched_tokens: 2048, or  no sort, 3.5  0.15 GiB (c)
//                            8192 on a GPU of 70 GiB and more
//   0.11 - 0.26      V1      the same                          no sort, 3.5  0.15 GiB (c);
//                                                                            --kv-cache-memory
//
// "sampler peak" is how many fp32 [max_num_seqs, vocab] tensors the profiled sampler holds at
// once (vllm_activation.h). V0 profiles top-k and top-p together, which sorts the whole
// vocabulary; V1's profiled sampler draws without a sort.
// (a) 0.6.4 measured all non-torch memory (CUDA context included): 0.35 GiB on one RTX 3090
//     (vllm issue 10517).
// (b) from vllm PR 10511's own logs on an H100: 1.79 GiB at TP 1, 3.58 GiB per GPU at TP 2
//     (the CUDA graph pool and cuBLAS workspaces were counted as non-torch in that window).
// (c) the increase over the start-up baseline, mostly cuBLAS and attention workspaces:
//     0.16 GiB on an H100 (vllm PR 12126), 0.13 GiB (vllm issue 50722), 0.03 GiB on an
//     RTX 4060 under WSL (vllm issue 13882); with TP, NCCL and the custom all-reduce buffers:
//     0.20 GiB per GPU (vllm PR 14447, 4 x RTX 3090).
// Non-torch memory is not a function of the model: it is what the CUDA runtime and libraries
// take, so it is a measured constant per release, and the user may give their own.
// CUDA graphs are captured after the pool is allocated, outside it, in every release here
// (0.11 and later log their size and suggest a --kv-cache-memory that leaves room for them).
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

namespace kvscope {

enum class VllmEngine : std::uint8_t { V0, V1 };

enum class VllmVersion : std::uint8_t { V0_6_4, V0_6_5, V0_7, V1_0_10, V1_0_26 };

struct VllmVersionInfo {
  VllmVersion version;
  std::string_view slug;   // "0.6.4", "0.6.5", "0.7-v0", "0.10", "0.26"
  std::string_view label;  // "vLLM 0.6.0-0.6.4 (V0 engine)"
  VllmEngine engine;
  std::int64_t non_torch_bytes;     // one GPU
  std::int64_t non_torch_tp_bytes;  // per GPU when TP > 1 (times TP where non_torch_per_rank)
  bool non_torch_per_rank;
  double sampler_units;                  // fp32 [max_num_seqs, vocab] tensors at the peak
  std::int64_t v0_chunked_batch_tokens;  // V0's max_num_batched_tokens with chunked prefill
  bool has_kv_cache_memory;              // takes --kv-cache-memory BYTES
};

std::span<const VllmVersionInfo> vllm_versions();
const VllmVersionInfo& vllm_version_info(VllmVersion version);
// The newest release modelled.
constexpr VllmVersion kLatestVllmVersion = VllmVersion::V1_0_26;
// By slug, case-insensitive; also "v0" (0.7-v0), "v1" and "latest" (0.26). UsageError naming
// the text and the accepted slugs.
VllmVersion parse_vllm_version(std::string_view text);

}  // namespace kvscope
