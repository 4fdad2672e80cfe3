// "What fits" questions answered with the memory model (plan_memory), never with a
// separate formula: each solver searches for the largest / smallest value at which
// plan_memory says fits, so a solver's answer and the plan for it always agree.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "kv/format/kv_format.h"
#include "plan/memory_model.h"
#include "plan/presets.h"

namespace kvscope {

struct MaxContext {
  std::int64_t tokens = 0;              // 0: not even one token per sequence fits
  bool limited_by_max_context = false;  // memory would allow more than kv.max_context
};

// The longest context every one of request.batch sequences can reach (request.context is
// ignored). Binary search: fitting is monotone in the context.
MaxContext max_context(const PlanRequest& request);

// The most sequences of request.context tokens that fit at once (0: not even one). Larger
// batches also need more workspace (logits, activations), which the search includes.
std::int64_t max_batch(const PlanRequest& request);

// The GPU with the least memory on which the request fits (request.budget.total_bytes and
// request.cuda are replaced by each GPU's memory and workspace options; utilisation and
// used_by_others kept; a KV budget is ignored). Ties in memory go to the one listed first. nullptr
// when none fits.
const GpuPreset* smallest_gpu(const PlanRequest& request, const std::vector<GpuPreset>& gpus);

// The most precise KV dtype, f16 > int8 > int4, that fits when every group stores K and V
// in it. nullopt when not even int4 fits.
std::optional<KvDtype> best_kv_dtype(const PlanRequest& request);

// The K and V dtypes of every layer group.
struct KvDtypes {
  KvDtype k = KvDtype::F16;
  KvDtype v = KvDtype::F16;
  bool operator==(const KvDtypes&) const = default;
};

// The most precise K and V dtypes that fit, trying f16, int8, int8 keys with int4 values,
// then int4. The mixed rung is there because the measured error says it pays: keys lose
// more than values in 4 bits, so int8 K + int4 V costs less than int4 K + int8 V (the
// README's KV cache table: mean KL from an f16 cache on SmolLM2-135M), and in fewer bytes
// (on SmolLM2, 136, 104, 124 and 92 bytes per token and KV head for int8, int8 K + int4 V,
// int4 K + int8 V and int4). nullopt when not even int4 fits.
std::optional<KvDtypes> best_kv_dtypes(const PlanRequest& request);

// Decoding reads every weight once per step and each sequence's visible keys and values,
// so no implementation decodes faster than memory bandwidth / bytes read:
//   step bytes     = weights read per token + batch x KV read per token at the context
//   tokens/s      <= batch x bandwidth / step bytes   (per sequence: bandwidth / step bytes)
struct RooflineEstimate {
  double bandwidth_gb_s = 0.0;
  std::int64_t weight_bytes_read = 0;  // per step
  std::int64_t kv_bytes_read = 0;      // per step, all sequences
  std::int64_t bytes_per_step = 0;
  double tokens_per_s = 0.0;  // all sequences together
  double tokens_per_s_per_sequence = 0.0;
};

// UsageError if bandwidth_gb_s is not a positive finite number.
RooflineEstimate roofline_decode(const PlanRequest& request, double bandwidth_gb_s);

}  // namespace kvscope
