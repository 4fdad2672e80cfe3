// What the planner says a server's KV pool should be, and the live usage read against it.
//
// The pool is planned with vLLM's own accounting (engine/plan/vllm_memory.h), for a model
// preset served as vLLM serves it: the checkpoint's weights (bf16 unless told), tp x pp GPUs of
// one kind with the memory CUDA reports for them, utilisation x that total, less weights,
// non-torch memory and the profiling run's activation peak, in blocks of block_size tokens:
//   planned tokens = GPU blocks x block_size   (what vLLM logs as "GPU KV cache size")
// A vLLM server says its pool in vllm:cache_config_info (num_gpu_blocks x block_size), so
//   pool difference = planned tokens / server's pool tokens - 1   (in percent)
// says how far the planner is from the server it watches. A server that says how many
// tokens its cache holds (llama-server's kv_cache_tokens, or KV usage x its pool) is then
// read against the planned pool:
//   planned usage = tokens held / planned tokens
// so the live and the planned line cross where the planner's pool is the server's. When
// the server gives neither, only its own usage is known and no planned line is drawn.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "plan/presets.h"
#include "plan/serving_kv_dtype.h"
#include "plan/vllm_memory.h"
#include "remote/server_sample.h"

namespace kvscope {

struct PoolQuestion {
  double utilisation = 0.90;  // vLLM's --gpu-memory-utilization default
  std::int64_t block_size = 16;
  std::int64_t tp = 1;
  std::int64_t pp = 1;
  ServingKvDtype kv_dtype = ServingKvDtype::Auto;
  std::int64_t max_num_seqs = 0;  // 0: the release's default; sizes the sampler's peak
  std::int64_t context = 0;       // max_model_len; 0: the model's context length
  VllmVersion version = kLatestVllmVersion;
  VllmWeightFormat weights = VllmWeightFormat::Bf16;
};

struct PlannedPool {
  std::string model;  // preset names
  std::string gpu;
  PoolQuestion question;
  std::int64_t blocks = 0;  // per GPU, the node's minimum over stages
  std::int64_t tokens = 0;  // blocks x block_size
  bool fits = false;        // the weights and the profiling run leave room for a pool at all
  std::string formula;      // vLLM's accounting written out (explain_vllm_memory)
};

// UsageError for a shape vLLM refuses or a bad question (plan_vllm_memory's).
PlannedPool plan_server_pool(const ModelPreset& model, const GpuPreset& gpu,
                             const PoolQuestion& question);

struct KvComparison {
  std::optional<double> live_pct;     // the server's usage
  std::optional<double> tokens;       // tokens it holds
  std::optional<double> planned_pct;  // tokens / planned pool
  std::optional<std::int64_t> server_pool_tokens;
  // server pool / planned pool: > 1 when the planner expected less room than the server has.
  std::optional<double> pool_ratio;
  // 100 x (planned pool / server pool - 1): + when the planner promises more than the server has.
  std::optional<double> pool_difference_pct;
};

KvComparison compare_kv(const ServerSample& sample, std::optional<double> kv_tokens,
                        const PlannedPool& plan);

}  // namespace kvscope
