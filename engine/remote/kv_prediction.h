// What the planner says a server's KV pool should be, and the live usage read against it.
//
// The planner (engine/plan, plan_parallel) sizes the pool for a model preset served as vLLM
// serves it: 16-bit weights from the Hugging Face repository, tp x pp GPUs of one kind, the
// GPU's memory x utilisation, less weights and workspace, in blocks of block_size tokens:
//   planned tokens = node KV blocks x block_size
// A server that says how many tokens its cache holds (llama-server's kv_cache_tokens, or
// KV usage x num_gpu_blocks x block_size from vLLM's cache_config_info) is then read
// against that pool:
//   planned usage = tokens held / planned tokens
// so the live and the planned line cross where the planner's pool is the server's. When
// the server gives neither, only its own usage is known and no planned line is drawn.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "plan/presets.h"
#include "plan/serving_kv_dtype.h"
#include "remote/server_sample.h"

namespace kvscope {

struct PoolQuestion {
  double utilisation = 0.90;  // vLLM's --gpu-memory-utilization default
  std::int64_t block_size = 16;
  std::int64_t tp = 1;
  std::int64_t pp = 1;
  ServingKvDtype kv_dtype = ServingKvDtype::Auto;
  std::int64_t max_num_seqs = 256;  // vLLM's default; sizes the workspace
  std::int64_t context = 0;         // max_model_len; 0: the model's context length
};

struct PlannedPool {
  std::string model;  // preset names
  std::string gpu;
  PoolQuestion question;
  std::int64_t blocks = 0;  // per GPU, the node's minimum over stages
  std::int64_t tokens = 0;  // blocks x block_size
  bool fits = false;        // the weights and workspace leave room for a pool at all
};

// UsageError for a shape the model refuses or a bad question (plan_parallel's).
PlannedPool plan_server_pool(const ModelPreset& model, const GpuPreset& gpu,
                             const PoolQuestion& question);

struct KvComparison {
  std::optional<double> live_pct;     // the server's usage
  std::optional<double> tokens;       // tokens it holds
  std::optional<double> planned_pct;  // tokens / planned pool
  std::optional<std::int64_t> server_pool_tokens;
  // server pool / planned pool: > 1 when the planner expected less room than the server has.
  std::optional<double> pool_ratio;
};

KvComparison compare_kv(const ServerSample& sample, std::optional<double> kv_tokens,
                        const PlannedPool& plan);

}  // namespace kvscope
