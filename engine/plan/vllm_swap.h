// The host memory vLLM's --swap-space must give each GPU, per release, for the server that
// vLLM's own accounting plans (vllm_memory.h).
//
// What vLLM does with it:
//   V0 (0.6 - 0.9)  each worker pins --swap-space GiB of host memory at start-up
//                   (num_cpu_blocks = swap_space_bytes // block bytes; default 4 GiB) and
//                   refuses to start when --swap-space x TP passes 70% of the host's memory
//                   ("Too large swap space"; it warns past 40%). The scheduler preempts a
//                   request of one sequence by recompute and swaps out a request of several
//                   (n > 1, beam search) whole; when the swap space cannot hold it the engine
//                   aborts ("Aborted due to the lack of CPU swap space").
//   V1 (0.8 and     never swaps: the engine core allocates no CPU blocks (num_cpu_blocks is
//   later)          0) and preempts by recompute only. The flag did nothing and was removed
//                   in 0.18 (vllm PR 36216), so a `vllm serve --swap-space` fails there.
//
// So a V1 command has no --swap-space. A V0 server can have swapped out, at most, the
// sequences its pool cannot hold at full length (vLLM admits new requests only while nothing
// is swapped out, so what is swapped was once on the GPU and then grew):
//   blocks per sequence  b = ceil(max_model_len / block_size)
//   resident sequences   r = floor(GPU blocks / b)
//   swapped sequences    s = min(cap, max(0, max_num_seqs - r))
//   bytes needed         s x b x block bytes   (per GPU: vLLM's block of that GPU's KV heads)
// where cap is the sequences of requests of several sequences (n > 1, beam search) that may be
// swapped out at once: requests of one sequence never swap. Clients of `vllm serve` send n = 1
// unless they ask otherwise, so the cap is 0 unless the caller says more; sizing for every
// sequence of max_num_seqs would ask hundreds of GiB that vLLM refuses to pin (past 70% of the
// host's memory) for swaps that never happen. --swap-space is written only when the bytes
// pass vLLM's default 4 GiB: ceil(bytes / GiB).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "plan/vllm_memory.h"

namespace kvscope {

// vLLM's default --swap-space, GiB per GPU (V0's CacheConfig).
constexpr std::int64_t kVllmDefaultSwapSpaceGib = 4;
// V0 refuses a swap space above this fraction of the host's memory (x TP), warns above 0.4.
constexpr double kVllmSwapSpaceHostLimit = 0.7;

struct VllmSwap {
  bool engine_swaps = false;  // the release's engine swaps (V0)
  std::int64_t blocks_per_sequence = 0;
  std::int64_t resident_sequences = 0;  // full-length sequences the GPU pool holds
  std::int64_t swapped_sequences = 0;   // the most swapped out at once
  // Sequences that would be swapped out if every one of max_num_seqs were of a request of
  // several (the cap's worst case; 0 where the pool holds them all).
  std::int64_t overflow_sequences = 0;
  std::int64_t bytes_needed = 0;  // per GPU
  // --swap-space: nullopt where it is not written (V1, or vLLM's default is enough).
  std::optional<std::int64_t> swap_space_gib;
  std::int64_t host_bytes_needed = 0;  // the host memory vLLM asks for it: GiB x TP / 0.7
};

// ceil(bytes / 2^30).
std::int64_t swap_space_gib(std::int64_t bytes);

// The swap space for vLLM's plan `plan` (its resolved request says the release, max_num_seqs
// and max_model_len) when at most `swapping_sequences` sequences of requests with several
// (n > 1, beam search) may be swapped out at once (0: every request is one sequence, which
// vLLM recomputes). UsageError for a negative count.
VllmSwap plan_vllm_swap(const VllmMemoryPlan& plan, std::int64_t swapping_sequences = 0);

// One line or two saying what the command does about swap space and why.
std::string explain_vllm_swap(const VllmMemoryPlan& plan, const VllmSwap& swap);

}  // namespace kvscope
