// How the simulator asks a policy for memory. One implementation per way of placing a
// sequence's KV: contiguous_allocator.h (reserve-max, exact-fit) and paged_allocator.h (the
// engine's KvCacheManager). The simulator (policy_simulation.h) owns the queue and the
// order of things; an allocator only places, grows, preempts and releases sequences and
// says where its slots are.
#pragma once

#include <cstdint>
#include <memory>

#include "sim/sim_config.h"
#include "sim/sim_frame.h"
#include "sim/trace/request_trace.h"

namespace kvscope {

// Slots of a frame that the allocator accounts for (the simulator adds external and free).
struct SimMemory {
  std::int64_t stored = 0;
  std::int64_t reserved = 0;
  std::int64_t internal = 0;
};

class SimAllocator {
 public:
  virtual ~SimAllocator() = default;

  // Places request r with `stored` tokens (its prompt, plus the tokens generated before a
  // preemption). False, changing nothing, when it does not fit now.
  virtual bool admit(const SimRequest& r, std::int64_t stored) = 0;
  // Whether a running sequence can store one more token without taking memory from another.
  virtual bool can_grow(std::int64_t id) const = 0;
  // Stores one more token (std::logic_error or CapacityError when it cannot).
  virtual void grow(std::int64_t id) = 0;
  // Releases a running sequence's memory; it is admitted again later with all its tokens.
  virtual void preempt(std::int64_t id) = 0;
  // Releases a finished sequence's memory.
  virtual void release(std::int64_t id) = 0;

  virtual SimMemory memory() const = 0;
  // Slots admit(r, stored) would take.
  virtual std::int64_t admission_need(const SimRequest& r, std::int64_t stored) const = 0;
  // Free slots that cannot serve a request needing `need` slots because of where they lie.
  virtual std::int64_t external(std::int64_t need) const = 0;
  // The map of held memory; head_need is copied into it (0: nobody waits).
  virtual SimBlockMap block_map(std::int64_t head_need) const = 0;
};

// The allocator of a policy (config validated by the caller).
std::unique_ptr<SimAllocator> make_sim_allocator(SimPolicy policy, const SimConfig& config);

}  // namespace kvscope
