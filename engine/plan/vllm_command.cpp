#include "plan/vllm_command.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

namespace kvscope {

namespace {

bool shell_safe(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '.' || c == '_' || c == '/' || c == '-';
  });
}

// 'text' with each ' written as '\'' (POSIX shell quoting).
std::string shell_quote(const std::string& s) {
  if (shell_safe(s)) return s;
  std::string out = "'";
  for (const char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// A Python string literal: backslashes and double quotes escaped.
std::string python_string(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '\\' || c == '"') out += '\\';
    out += c;
  }
  return out + "\"";
}

}  // namespace

std::string vllm_serve_command(const VllmArgs& a) {
  std::string out = fmt::format("vllm serve {}", shell_quote(a.model));
  auto arg = [&](std::string_view name, const std::string& value) {
    out += fmt::format(" \\\n  --{} {}", name, value);
  };
  arg("tensor-parallel-size", fmt::format("{}", a.tensor_parallel_size));
  arg("pipeline-parallel-size", fmt::format("{}", a.pipeline_parallel_size));
  arg("max-model-len", fmt::format("{}", a.max_model_len));
  arg("max-num-seqs", fmt::format("{}", a.max_num_seqs));
  arg("gpu-memory-utilization", fmt::format("{:.2f}", a.gpu_memory_utilization));
  arg("kv-cache-dtype", std::string(serving_kv_dtype_name(a.kv_cache_dtype)));
  arg("block-size", fmt::format("{}", a.block_size));
  if (a.swap_space_gib) arg("swap-space", fmt::format("{}", *a.swap_space_gib));
  if (a.max_num_batched_tokens > 0) {
    arg("max-num-batched-tokens", fmt::format("{}", a.max_num_batched_tokens));
  }
  if (a.enable_chunked_prefill) out += " \\\n  --enable-chunked-prefill";
  if (a.kv_cache_memory) arg("kv-cache-memory", fmt::format("{}", *a.kv_cache_memory));
  return out + "\n";
}

std::string vllm_python_call(const VllmArgs& a) {
  std::string extra;
  if (a.swap_space_gib) extra += fmt::format(", swap_space={}", *a.swap_space_gib);
  if (a.max_num_batched_tokens > 0) {
    extra += fmt::format(", max_num_batched_tokens={}", a.max_num_batched_tokens);
  }
  if (a.enable_chunked_prefill) extra += ", enable_chunked_prefill=True";
  if (a.kv_cache_memory) extra += fmt::format(", kv_cache_memory_bytes={}", *a.kv_cache_memory);
  return fmt::format(
      "LLM(model={}, tensor_parallel_size={}, pipeline_parallel_size={}, max_model_len={}, "
      "max_num_seqs={}, gpu_memory_utilization={:.2f}, kv_cache_dtype=\"{}\", block_size={}{})\n",
      python_string(a.model), a.tensor_parallel_size, a.pipeline_parallel_size, a.max_model_len,
      a.max_num_seqs, a.gpu_memory_utilization, serving_kv_dtype_name(a.kv_cache_dtype),
      a.block_size, extra);
}

VllmArgs vllm_args_for(const std::string& model, const ParallelRequest& request,
                       const VllmSwap& swap) {
  VllmArgs v;
  v.model = model;
  v.tensor_parallel_size = request.shape.tp;
  v.pipeline_parallel_size = request.shape.pp;
  v.max_model_len = request.base.context;
  v.max_num_seqs = request.base.batch;
  v.gpu_memory_utilization = request.base.budget.utilisation;
  v.kv_cache_dtype = request.kv_dtype;
  v.block_size = request.base.kv.block_size;
  v.swap_space_gib = swap.swap_space_gib;
  return v;
}

VllmRequest vllm_memory_request(const ParallelRequest& request, std::int64_t gpu_memory_bytes,
                                VllmVersion version, VllmWeightFormat weights) {
  VllmRequest r;
  r.spec = request.base.spec;
  r.weights = weights;
  r.version = version;
  r.total_gpu_memory = reported_gpu_memory(gpu_memory_bytes);
  r.gpu_memory_utilization = request.base.budget.utilisation;
  r.tp = request.shape.tp;
  r.pp = request.shape.pp;
  r.max_model_len = request.base.context;
  r.max_num_seqs = request.base.batch;
  r.kv_dtype = request.kv_dtype;
  r.block_size = request.base.kv.block_size;
  return r;
}

VllmArgs with_concurrency_flags(VllmArgs args, const VllmConcurrency& concurrency) {
  const VllmRequest& flags = concurrency.request;
  args.max_num_seqs = flags.max_num_seqs;
  args.max_num_batched_tokens = flags.max_num_batched_tokens;
  args.enable_chunked_prefill = vllm_version_info(flags.version).engine == VllmEngine::V0 &&
                                flags.chunked_prefill.value_or(false);
  args.gpu_memory_utilization = flags.gpu_memory_utilization;
  args.kv_cache_memory = concurrency.kv_cache_memory;
  args.swap_space_gib = plan_vllm_swap(concurrency.plan).swap_space_gib;
  return args;
}

}  // namespace kvscope
