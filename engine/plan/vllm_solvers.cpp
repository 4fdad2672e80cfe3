#include "plan/vllm_solvers.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "plan/last_true.h"
#include "util/error.h"

namespace kvscope {

namespace {

constexpr std::int64_t kV0ChunkedAbove = 32768;  // as resolve_vllm_request

bool starts_at(VllmRequest r, std::int64_t max_model_len) {
  r.max_model_len = max_model_len;
  return plan_vllm_memory(r).starts;
}

// The largest length in [lo, hi] that starts, where starting is monotone (a shorter context
// never costs more); 0 when none does.
std::int64_t largest_starting(const VllmRequest& r, std::int64_t lo, std::int64_t hi) {
  if (lo > hi) return 0;
  const std::int64_t largest = last_true(lo, hi, [&r](std::int64_t n) { return starts_at(r, n); });
  return largest < lo ? 0 : largest;
}

// The profiling batches to try for a concurrency, largest first: the release's default
// for max_model_len, then chunked batches that fit more KV.
std::vector<std::int64_t> batch_candidates(const VllmRequest& r) {
  if (r.max_num_batched_tokens > 0) return {r.max_num_batched_tokens};
  const VllmRequest d = resolve_vllm_request(r);
  std::vector<std::int64_t> out{d.max_num_batched_tokens};
  for (const std::int64_t t : {std::int64_t{2048}, std::int64_t{1024}, std::int64_t{512}}) {
    if (t < out.back()) out.push_back(t);
  }
  return out;
}

}  // namespace

std::int64_t vllm_max_model_len(const VllmRequest& request) {
  const std::int64_t context = request.spec.context_length;
  const bool v0 = vllm_version_info(request.version).engine == VllmEngine::V0;
  if (!v0 || request.chunked_prefill || request.max_num_batched_tokens > 0) {
    return largest_starting(request, 1, context);
  }
  // V0's default changes at 32k: two regions, each monotone.
  return std::max(largest_starting(request, 1, std::min(context, kV0ChunkedAbove)),
                  largest_starting(request, kV0ChunkedAbove + 1, context));
}

VllmConcurrency vllm_concurrency(const VllmRequest& request, std::int64_t concurrency) {
  if (concurrency < 1) throw_error<UsageError>("--concurrency {} is below 1", concurrency);
  const VllmVersionInfo& version = vllm_version_info(request.version);
  VllmConcurrency best;
  best.concurrency = concurrency;
  best.utilisation_needed = 1e9;
  for (const std::int64_t tokens : batch_candidates(request)) {
    VllmRequest r = request;
    r.max_num_seqs = concurrency;
    r.max_num_batched_tokens = tokens;
    r.kv_cache_memory.reset();
    VllmRequest resolved = resolve_vllm_request(r);
    if (version.engine == VllmEngine::V0 && tokens < resolved.max_model_len) {
      r.chunked_prefill = true;  // V0 must chunk a context longer than its batch
    }
    const VllmMemoryPlan at_full = plan_vllm_memory(r);
    const std::int64_t blocks =
        (concurrency * at_full.request.max_model_len + r.block_size - 1) / r.block_size;
    const std::int64_t kv_bytes = blocks * at_full.block_bytes;
    const std::int64_t needed =
        at_full.weights.bytes + at_full.non_torch_bytes + at_full.activation.peak_bytes + kv_bytes;
    const double util = static_cast<double>(needed) / static_cast<double>(request.total_gpu_memory);
    if (util >= best.utilisation_needed) continue;
    best.kv_tokens_needed = blocks * r.block_size;
    best.kv_bytes_needed = kv_bytes;
    best.utilisation_needed = util;
    best.request = r;
    if (util <= kMaxUtilisation) break;  // the largest batch that fits
  }
  best.possible = best.utilisation_needed <= kMaxUtilisation;
  // The utilisation to ask for: the user's when it is enough, else the need rounded up to
  // a hundredth (the flag's precision in the command line).
  const double rounded = std::ceil(best.utilisation_needed * 100.0 - 1e-9) / 100.0;
  best.request.gpu_memory_utilization =
      std::min(1.0, std::max(request.gpu_memory_utilization, rounded));
  if (version.has_kv_cache_memory) best.kv_cache_memory = best.kv_bytes_needed;
  best.plan = plan_vllm_memory(best.request);
  return best;
}

}  // namespace kvscope
