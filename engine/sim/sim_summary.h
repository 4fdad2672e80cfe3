// The figures of one policy over a whole run, accumulated frame by frame (so a run need
// not keep its frames).
//
// Used-slot share = sum over steps of stored slots / sum over steps of taken slots (stored
// + reserved + internal + external): of the memory a policy kept from other requests, the
// part holding token states, weighted by how long it was held. This is the figure vLLM's
// paper gives (Figure 2: 96.3% for its paged cache, 20.4-38.2% for contiguous ones). Free
// memory nobody waits for is not counted against a policy.
#pragma once

#include <cstdint>

#include "sim/sim_frame.h"

namespace kvscope {

struct SimSummary {
  std::int64_t capacity = 0;       // token slots
  std::int64_t requests = 0;       // in the trace
  std::int64_t steps = 0;          // steps run
  std::int64_t admitted = 0;       // requests admitted at least once
  std::int64_t finished = 0;       // requests done
  std::int64_t preemptions = 0;    // sequences preempted (paged only)
  std::int64_t recomputed = 0;     // tokens stored again after a preemption
  std::int64_t peak_running = 0;   // most sequences holding memory in one step
  std::int64_t running_steps = 0;  // sum over steps of the sequences running
  std::int64_t total_wait = 0;     // sum over admitted requests of steps from arrival to admission
  // Slot-steps: each state's slots summed over the steps run.
  std::int64_t stored = 0;
  std::int64_t reserved = 0;
  std::int64_t internal = 0;
  std::int64_t external = 0;
  std::int64_t free = 0;

  std::int64_t taken() const { return stored + reserved + internal + external; }
  // Shares of taken slot-steps (0 when nothing was ever taken); the four sum to 1.
  double used_share() const { return share(stored); }
  double reserved_share() const { return share(reserved); }
  double internal_share() const { return share(internal); }
  double external_share() const { return share(external); }
  // Stored slot-steps over all slot-steps of the capacity.
  double mean_utilisation() const;
  double mean_running() const;  // running_steps / steps
  double mean_wait() const;     // total_wait / admitted

 private:
  double share(std::int64_t part) const;
};

// Adds one frame: its slots, its running count, and the cumulative counters it carries.
void accumulate(SimSummary& summary, const SimFrame& frame);

}  // namespace kvscope
