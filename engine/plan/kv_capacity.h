// The KV sizes and capacities the GQA and KV quantization demos show, every one from the
// planner (engine/plan), whose bytes function is the allocator's: no formula of our own.
// The attention layouts (MHA / GQA / MQA and their KV head counts) are the "What fits"
// page's (plan/kv_curves.h), so both pages compare the same variants.
#pragma once

#include <cstdint>

#include "kv/format/kv_format.h"
#include "model/model_spec.h"

namespace kvscope {

struct KvCapacity {
  std::int64_t n_kv_heads = 0;
  // For display: kv_bytes_per_token_per_layer, and over all layers plan_memory's
  // kv_bytes_per_token (fractional when Int4 keys' block offsets do not divide evenly).
  double bytes_per_token_per_layer = 0.0;
  double bytes_per_token = 0.0;
  // KV one sequence holds at the model's context length, whole blocks (plan_memory).
  std::int64_t full_context_bytes = 0;
  // The longest single sequence whose KV fits in the budget (max_context with the KV
  // budget, searched up to the planner's limit of 2^30 tokens, not the model's context).
  std::int64_t context_tokens = 0;
  bool at_planner_limit = false;  // any length fits (a sliding window bounds the KV)
};

// For `spec` with `n_kv_heads` KV heads (its own, or a layout's), K and V stored in
// `dtype`, blocks of 16 tokens and a KV pool of `kv_budget_bytes` (< 1: context_tokens
// is 0). Throws UsageError for a shape the planner rejects.
KvCapacity kv_capacity(const ModelSpec& spec, std::int64_t n_kv_heads, KvDtype dtype,
                       std::int64_t kv_budget_bytes);

}  // namespace kvscope
