// Questions answered with vLLM's own accounting (vllm_memory.h) rather than KVScope's:
//
//   vllm_max_model_len   the largest max_model_len vLLM starts with. Under V0 without chunked
//                        prefill the profiling batch is max_model_len tokens, so a longer
//                        context also costs activation memory: the answer is searched, per
//                        region where the defaults stay the same (V0 switches chunked prefill
//                        on above 32,768 tokens, which shrinks the batch to the release's).
//   vllm_concurrency     the flags that give `concurrency` requests of max_model_len tokens
//                        at once: --max-num-seqs N (the profiled sampler holds N x vocab
//                        logits, so fewer sequences free memory), the largest
//                        --max-num-batched-tokens that still fits (V0: chunked prefill when the
//                        whole context does not), the --gpu-memory-utilization that holds
//                        N x max_model_len tokens of KV, and --kv-cache-memory BYTES (the pool
//                        itself) on releases that take it.
#pragma once

#include <cstdint>
#include <optional>

#include "plan/vllm_memory.h"

namespace kvscope {

// 0 when no max_model_len starts (the weights alone leave no room).
std::int64_t vllm_max_model_len(const VllmRequest& request);

struct VllmConcurrency {
  std::int64_t concurrency = 0;
  std::int64_t kv_tokens_needed = 0;  // concurrency x max_model_len, in whole blocks
  std::int64_t kv_bytes_needed = 0;
  double utilisation_needed = 0.0;  // (weights + non-torch + activation + KV) / total
  bool possible = false;            // utilisation_needed <= kMaxUtilisation
  VllmRequest request;              // the flags: max_num_seqs, batched tokens, utilisation
  std::optional<std::int64_t> kv_cache_memory;  // --kv-cache-memory where the release has it
  VllmMemoryPlan plan;                          // vLLM's plan with those flags
};

// The most of a GPU a plan asks for: the rest holds the CUDA graphs, captured after the pool
// and outside the budget.
constexpr double kMaxUtilisation = 0.95;

// UsageError for concurrency < 1 or a request plan_vllm_memory refuses.
VllmConcurrency vllm_concurrency(const VllmRequest& request, std::int64_t concurrency);

}  // namespace kvscope
