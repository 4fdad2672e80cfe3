#include "plan/vllm_swap.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "plan/units.h"
#include "util/error.h"

namespace kvscope {

namespace {

constexpr std::int64_t kGiB = std::int64_t{1} << 30;

std::string gib(std::int64_t bytes) {
  return fmt::format("{:.2f} GiB", static_cast<double>(bytes) / static_cast<double>(kGiB));
}

}  // namespace

std::int64_t swap_space_gib(std::int64_t bytes) {
  return bytes <= 0 ? 0 : (bytes - 1) / kGiB + 1;
}

VllmSwap plan_vllm_swap(const VllmMemoryPlan& plan, std::int64_t swapping_sequences) {
  if (swapping_sequences < 0) {
    throw_error<UsageError>("swap space: {} sequences to swap (must be >= 0)", swapping_sequences);
  }
  const VllmRequest& r = plan.request;
  VllmSwap s;
  s.engine_swaps = vllm_version_info(r.version).engine == VllmEngine::V0;
  // V1 never swaps (vllm_swap.h): nothing to size, and the flag is not written.
  if (!s.engine_swaps || r.block_size < 1) return s;
  s.blocks_per_sequence = (r.max_model_len + r.block_size - 1) / r.block_size;
  s.resident_sequences =
      s.blocks_per_sequence > 0 ? plan.gpu_blocks / s.blocks_per_sequence : r.max_num_seqs;
  s.overflow_sequences = std::max<std::int64_t>(0, r.max_num_seqs - s.resident_sequences);
  s.swapped_sequences = std::min(s.overflow_sequences, swapping_sequences);
  s.bytes_needed = s.swapped_sequences * s.blocks_per_sequence * plan.block_bytes;
  const std::int64_t gib_needed = swap_space_gib(s.bytes_needed);
  if (gib_needed > kVllmDefaultSwapSpaceGib) {
    s.swap_space_gib = gib_needed;
    s.host_bytes_needed = static_cast<std::int64_t>(
        std::ceil(static_cast<double>(gib_needed * kGiB * r.tp) / kVllmSwapSpaceHostLimit));
  }
  return s;
}

std::string explain_vllm_swap(const VllmMemoryPlan& plan, const VllmSwap& swap) {
  const VllmRequest& r = plan.request;
  if (!swap.engine_swaps) {
    return fmt::format(
        "swap space: no --swap-space: {} preempts by recompute and never swaps (the flag did "
        "nothing there, and 0.18 removed it)\n",
        vllm_version_info(r.version).label);
  }
  if (swap.resident_sequences >= r.max_num_seqs) {
    return fmt::format(
        "swap space: vLLM's default {} GiB per GPU: the pool holds the {} sequence{} of {} tokens "
        "at full length, none is swapped out\n",
        kVllmDefaultSwapSpaceGib, group_digits(r.max_num_seqs), r.max_num_seqs == 1 ? "" : "s",
        group_digits(r.max_model_len));
  }
  if (swap.swapped_sequences == 0) {
    return fmt::format(
        "swap space: vLLM's default {} GiB per GPU: requests of one sequence are recomputed when "
        "preempted, never swapped. Requests of several (n > 1, beam search) are swapped out "
        "whole: up to {} such sequences of {} tokens ({} x {} B each) past what the pool holds\n",
        kVllmDefaultSwapSpaceGib, group_digits(swap.overflow_sequences),
        group_digits(r.max_model_len), group_digits(swap.blocks_per_sequence),
        group_digits(plan.block_bytes));
  }
  std::string out = fmt::format(
      "swap space: {} sequences of {} tokens swapped out whole (the pool holds {} at full "
      "length): {} x {} blocks x {} B = {} per GPU",
      group_digits(swap.swapped_sequences), group_digits(r.max_model_len),
      group_digits(swap.resident_sequences), group_digits(swap.swapped_sequences),
      group_digits(swap.blocks_per_sequence), group_digits(plan.block_bytes),
      gib(swap.bytes_needed));
  if (!swap.swap_space_gib) {
    return out + fmt::format(", within vLLM's default {} GiB\n", kVllmDefaultSwapSpaceGib);
  }
  out += fmt::format(
      " (--swap-space {})\nvLLM pins it at start-up and refuses it above {:.0f}% of the host's "
      "memory: a host of {} or more. Only requests of several sequences (n > 1, beam search) "
      "swap; requests of one are recomputed and need no more than the default\n",
      *swap.swap_space_gib, kVllmSwapSpaceHostLimit * 100.0, gib(swap.host_bytes_needed));
  return out;
}

}  // namespace kvscope
