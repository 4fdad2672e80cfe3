// What the paged-vs-contiguous simulator compares and in how much memory.
//
// Policies (the three ways of giving a sequence its KV memory):
//   ReserveMax  contiguous: every sequence reserves max_context slots at admission, as a
//               static cache does (Orca "max" in vLLM's paper);
//   ExactFit    contiguous: every sequence reserves exactly prompt + output slots, placed
//               first-fit in a linear address space (the "oracle" that knows each output
//               length in advance); holes are left where sequences finish;
//   Paged       blocks of block_size slots from the engine's own KvCacheManager, taken as
//               the sequence grows (vLLM's PagedAttention).
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

namespace kvscope {

enum class SimPolicy { ReserveMax, ExactFit, Paged };

inline constexpr std::array<SimPolicy, 3> kSimPolicies = {SimPolicy::ReserveMax,
                                                          SimPolicy::ExactFit, SimPolicy::Paged};

// "reserve-max", "exact-fit", "paged".
std::string_view sim_policy_name(SimPolicy policy);
// "contiguous, reserve max context", "contiguous, exact size (first fit)", "paged".
std::string_view sim_policy_title(SimPolicy policy);

struct SimConfig {
  std::int64_t capacity = 8192;  // token slots of KV memory
  std::int64_t block_size = 16;  // paged: slots per block, 1 .. 256
  std::int64_t max_context = 2048;
};

inline constexpr std::int64_t kSimMaxCapacity = std::int64_t{1} << 24;
inline constexpr std::int64_t kSimMaxBlockSize = 256;

// Paged blocks: floor(capacity / block_size); the capacity % block_size slots left over
// cannot be handed out.
std::int64_t sim_paged_blocks(const SimConfig& config);

// UsageError naming the field: capacity outside [1, 2^24], block size outside [1, 256],
// max_context < 2 or larger than what every policy can hand one sequence (the capacity,
// and the paged blocks' slots), so that every request can always be served alone.
void validate_sim_config(const SimConfig& config);

}  // namespace kvscope
