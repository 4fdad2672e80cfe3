#include "sim/sim_allocator.h"

#include "sim/contiguous_allocator.h"
#include "sim/paged_allocator.h"

namespace kvscope {

std::unique_ptr<SimAllocator> make_sim_allocator(SimPolicy policy, const SimConfig& config) {
  switch (policy) {
    case SimPolicy::ReserveMax:
      return std::make_unique<ContiguousAllocator>(config.capacity, config.max_context, true);
    case SimPolicy::ExactFit:
      return std::make_unique<ContiguousAllocator>(config.capacity, config.max_context, false);
    case SimPolicy::Paged:
      return std::make_unique<PagedAllocator>(config);
  }
  return nullptr;
}

}  // namespace kvscope
