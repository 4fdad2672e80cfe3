// The vLLM invocation that realises a node plan: the `vllm serve` command line and the same
// settings as arguments of the Python LLM(...) constructor (vLLM's EngineArgs names).
//
//   --tensor-parallel-size / --pipeline-parallel-size   the plan's tp and pp
//   --max-model-len    the context every sequence may reach
//   --max-num-seqs     the sequences the plan keeps in the KV pool at once
//   --gpu-memory-utilization   the budget's fraction of each GPU
//   --kv-cache-dtype   auto or fp8
//   --block-size       tokens per KV block
//   --swap-space       only where the release swaps and needs more than vLLM's default 4 GiB:
//                      GiB of host memory per GPU for swapped-out sequences (vllm_swap.h);
//                      never for a V1 release, which does not swap
// and, only when set (a concurrency asked for, vllm_solvers.h):
//   --max-num-batched-tokens, --enable-chunked-prefill, --kv-cache-memory BYTES
//
// vllm_memory_request turns the same request into vLLM's own accounting (vllm_memory.h), so
// the command and the capacity printed beside it are about the same server.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "plan/parallel_plan.h"
#include "plan/serving_kv_dtype.h"
#include "plan/vllm_memory.h"
#include "plan/vllm_solvers.h"
#include "plan/vllm_swap.h"

namespace kvscope {

struct VllmArgs {
  std::string model;  // Hugging Face repo id, or a local path
  std::int64_t tensor_parallel_size = 1;
  std::int64_t pipeline_parallel_size = 1;
  std::int64_t max_model_len = 0;
  std::int64_t max_num_seqs = 1;
  double gpu_memory_utilization = 0.90;
  ServingKvDtype kv_cache_dtype = ServingKvDtype::Auto;
  std::int64_t block_size = 16;
  std::optional<std::int64_t> swap_space_gib;  // nullopt: not written (vLLM's default, or V1)
  std::int64_t max_num_batched_tokens = 0;     // 0: not written (vLLM's default)
  bool enable_chunked_prefill = false;         // written only when true
  std::optional<std::int64_t> kv_cache_memory;
};

// The arguments that realise `request` (its shape, context, batch, utilisation, KV dtype and
// block size) for `model`, a Hugging Face repo id or a path, with the --swap-space of `swap`
// (plan_vllm_swap of vLLM's plan for the same server: the release decides whether there is
// one). The CLI's --emit vllm and the What fits page both use it.
VllmArgs vllm_args_for(const std::string& model, const ParallelRequest& request,
                       const VllmSwap& swap);

// The request vLLM's accounting plans for `request` on GPUs sold with `gpu_memory_bytes`
// each (CUDA reports less: reported_gpu_memory): the model's shape, TP, PP, utilisation,
// max_model_len (the context), max_num_seqs (the batch), KV dtype and block size.
VllmRequest vllm_memory_request(const ParallelRequest& request, std::int64_t gpu_memory_bytes,
                                VllmVersion version, VllmWeightFormat weights);

// `args` with the flags of a concurrency answer (max_num_seqs, batched tokens, chunked
// prefill, utilisation, --kv-cache-memory) and the swap space of its plan (its pool holds
// every sequence, so vLLM's default).
VllmArgs with_concurrency_flags(VllmArgs args, const VllmConcurrency& concurrency);

// "vllm serve MODEL \\\n  --tensor-parallel-size 4 \\\n ..." ending in '\n'; the model is
// shell-quoted when it holds anything but [A-Za-z0-9._/-].
std::string vllm_serve_command(const VllmArgs& args);

// "LLM(model=\"...\", tensor_parallel_size=4, ...)" ending in '\n'.
std::string vllm_python_call(const VllmArgs& args);

}  // namespace kvscope
