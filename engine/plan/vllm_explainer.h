// vLLM's accounting written out term by term, with the numbers of one plan, as the CLI's
// `plan --emit vllm` prints it (as '# ' comments above the command) and the What fits page's
// Serve with vLLM tab shows it. Each line is one term of vllm_memory.h's formula:
//
//   vLLM 0.6.0-0.6.4 (V0 engine), per GPU (TP 1, PP 1): 23.58 GiB as CUDA reports it
//   budget      0.90 x 23.58 GiB                                             = 21.22 GiB
//   weights     6.98 B linear params x 2 B (bf16) + 1.05 B bf16 + rope cache = 14.99 GiB
//   ...
#pragma once

#include <string>

#include "plan/vllm_memory.h"
#include "plan/vllm_solvers.h"

namespace kvscope {

// Lines ending in '\n'.
std::string explain_vllm_memory(const VllmMemoryPlan& plan);

// "KV cache 31,312 tokens (1,957 blocks of 16); maximum concurrency for 20,000 tokens per
// request: 1.57x" or "does not start: <vLLM's message>".
std::string vllm_verdict(const VllmMemoryPlan& plan);

// The flags for a concurrency, one per line, and whether the GPU can give it.
std::string explain_vllm_concurrency(const VllmConcurrency& answer);

}  // namespace kvscope
