// The data of the "KV memory vs context" chart: for the planned request, the KV pool one
// batch needs at each context length (kv_footprint's pool_bytes_needed, the allocator's
// blocks) for the model as it is, and for the same shape with its KV heads changed to the
// three attention layouts, each with K and V in f16, int8 and int4:
//   MHA  n_kv_heads = n_heads     (every query head has its own K and V)
//   GQA  n_kv_heads = the model's own when it shares heads, else 8, or the largest divisor
//        of n_heads below 8 (Llama-2-70B, Llama-3 and Mistral share 8 KV heads)
//   MQA  n_kv_heads = 1           (one K and V for all query heads)
// Layer groups, windows, block size, batch and growth step are the request's.
#pragma once

#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include "kv/format/kv_format.h"
#include "plan/memory_model.h"

namespace kvscope {

enum class AttentionLayout { Mha, Gqa, Mqa };

// "MHA", "GQA", "MQA".
std::string_view attention_layout_name(AttentionLayout layout);

// The KV heads of `layout` for a model of this shape; 0 for GQA when it does not exist:
// the model is not grouped itself and no count in 2..8 below n_heads divides n_heads
// (n_heads 2, 3, 5, 7 or a larger prime).
std::int64_t layout_kv_heads(const ModelSpec& spec, AttentionLayout layout);

struct KvCurve {
  bool this_model = false;  // the request as it is (its own KV heads and dtypes)
  AttentionLayout layout = AttentionLayout::Mha;  // when !this_model
  std::int64_t n_kv_heads = 0;
  KvDtype k_dtype = KvDtype::F16;
  KvDtype v_dtype = KvDtype::F16;
  // (tokens per sequence, KV pool bytes the batch needs), tokens ascending from 0 to the
  // model's max_context.
  std::vector<std::pair<std::int64_t, std::int64_t>> points;
};

// The request's cache with `n_kv_heads` KV heads, every group's K and V in the given dtypes
// and its window pools as the engine sizes them (with_window_pools): the config each curve
// is computed from.
KvCacheConfig kv_variant(const PlanRequest& request, std::int64_t n_kv_heads, KvDtype k_dtype,
                         KvDtype v_dtype);

// The `n_points` + 1 context lengths the curves are sampled at: 0 .. max_context evenly.
std::vector<std::int64_t> kv_curve_contexts(std::int64_t max_context, int n_points);

// The model's own curve first, then every existing layout x {f16, int8, int4} (layout
// outer). Throws UsageError (from kv_footprint) for a request plan_memory would reject.
std::vector<KvCurve> kv_curves(const PlanRequest& request, int n_points);

}  // namespace kvscope
