// The vLLM invocation that realises a node plan: the `vllm serve` command line and the same
// settings as arguments of the Python LLM(...) constructor (vLLM's EngineArgs names).
//
//   --tensor-parallel-size / --pipeline-parallel-size   the plan's tp and pp
//   --max-model-len    the context every sequence may reach
//   --max-num-seqs     the sequences the plan keeps in the KV pool at once
//   --gpu-memory-utilization   the budget's fraction of each GPU
//   --kv-cache-dtype   auto or fp8
//   --block-size       tokens per KV block
//   --swap-space       GiB of host memory per GPU for preempted sequences (swap_bytes_per_gpu,
//                      rounded up to whole GiB)
#pragma once

#include <cstdint>
#include <string>

#include "plan/parallel_plan.h"
#include "plan/serving_kv_dtype.h"

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
  std::int64_t swap_space_gib = 0;
};

// ceil(bytes / 2^30).
std::int64_t swap_space_gib(std::int64_t bytes);

// The arguments that realise `request` (its shape, context, batch, utilisation, KV dtype and
// block size) for `model`, a Hugging Face repo id or a path, with swap_space_gib(swap_bytes)
// of host memory per GPU. The CLI's --emit vllm and the What fits page both use it.
VllmArgs vllm_args_for(const std::string& model, const ParallelRequest& request,
                       std::int64_t swap_bytes);

// "vllm serve MODEL \\\n  --tensor-parallel-size 4 \\\n ..." ending in '\n'; the model is
// shell-quoted when it holds anything but [A-Za-z0-9._/-].
std::string vllm_serve_command(const VllmArgs& args);

// "LLM(model=\"...\", tensor_parallel_size=4, ...)" ending in '\n'.
std::string vllm_python_call(const VllmArgs& args);

}  // namespace kvscope
