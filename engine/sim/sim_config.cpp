#include "sim/sim_config.h"

#include "util/error.h"

namespace kvscope {

std::string_view sim_policy_name(SimPolicy policy) {
  switch (policy) {
    case SimPolicy::ReserveMax:
      return "reserve-max";
    case SimPolicy::ExactFit:
      return "exact-fit";
    case SimPolicy::Paged:
      return "paged";
  }
  return "?";
}

std::string_view sim_policy_title(SimPolicy policy) {
  switch (policy) {
    case SimPolicy::ReserveMax:
      return "contiguous, reserve max context";
    case SimPolicy::ExactFit:
      return "contiguous, exact size (first fit)";
    case SimPolicy::Paged:
      return "paged";
  }
  return "?";
}

std::int64_t sim_paged_blocks(const SimConfig& config) {
  return config.block_size > 0 ? config.capacity / config.block_size : 0;
}

void validate_sim_config(const SimConfig& config) {
  if (config.capacity < 1 || config.capacity > kSimMaxCapacity) {
    throw_error<UsageError>("simulator: capacity {} token slots (need 1 to {})", config.capacity,
                            kSimMaxCapacity);
  }
  if (config.block_size < 1 || config.block_size > kSimMaxBlockSize) {
    throw_error<UsageError>("simulator: block size {} (need 1 to {})", config.block_size,
                            kSimMaxBlockSize);
  }
  if (config.max_context < 2) {
    throw_error<UsageError>("simulator: max context {} (need >= 2)", config.max_context);
  }
  if (config.max_context > config.capacity) {
    throw_error<UsageError>(
        "simulator: max context {} exceeds the capacity of {} token slots: reserving the "
        "maximum context could never admit a request",
        config.max_context, config.capacity);
  }
  const std::int64_t paged_slots = sim_paged_blocks(config) * config.block_size;
  if (config.max_context > paged_slots) {
    throw_error<UsageError>(
        "simulator: {} blocks of {} slots hold {} of the {} slots, fewer than max context {}",
        sim_paged_blocks(config), config.block_size, paged_slots, config.capacity,
        config.max_context);
  }
}

}  // namespace kvscope
