// One policy serving a request trace, one step at a time (the UI animates it; run_policy()
// in simulation.h runs it to the end).
//
// A step, in order:
//   1. the sequences that finished in the previous step release their memory;
//   2. requests arriving in this step join the back of the waiting queue;
//   3. every running sequence, oldest admission first, stores one generated token. When
//      the memory is full (paged only; contiguous sequences grow inside their reservation)
//      it preempts the running sequences admitted after it, newest first, as the engine's
//      scheduler does; they go to the front of the queue and store all their tokens again
//      (recompute) when admitted again. With nobody newer to preempt it skips this step;
//   4. waiting requests are admitted in order (FCFS) while the policy finds them memory;
//      an admitted request stores its prompt (plus any tokens generated before a
//      preemption) in this step, and generates from the next one. The first request that
//      does not fit stops admission: nobody overtakes it;
//   5. the frame is recorded; a sequence whose prompt + output tokens are all stored is
//      finished and counted in it, still holding its memory (released in 1. next step).
// So a request admitted at step a with no preemption finishes at step a + output.
//
// Prompts are stored whole at admission (no chunked prefill), as in vLLM's paper.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "sim/sim_allocator.h"
#include "sim/sim_config.h"
#include "sim/sim_frame.h"
#include "sim/sim_summary.h"
#include "sim/trace/request_trace.h"

namespace kvscope {

class PolicySimulation {
 public:
  // Validates the config and the trace against it (UsageError).
  PolicySimulation(SimPolicy policy, std::vector<SimRequest> trace, const SimConfig& config);
  ~PolicySimulation();
  PolicySimulation(PolicySimulation&&) noexcept;
  PolicySimulation& operator=(PolicySimulation&&) noexcept;

  SimPolicy policy() const { return policy_; }
  const SimConfig& config() const { return config_; }
  const std::vector<SimRequest>& trace() const { return trace_; }

  // Whether every request has finished.
  bool done() const;
  // Runs the next step and returns its frame (std::logic_error when done()). Throws
  // std::logic_error past step_limit(), which a correct simulation never reaches.
  const SimFrame& step();
  // Steps run so far, and the frame of the last one (a zero frame before the first).
  std::int64_t steps() const { return summary_.steps; }
  const SimFrame& frame() const { return frame_; }
  // The figures so far (the run's figures once done()).
  const SimSummary& summary() const { return summary_; }
  // The memory as the last frame saw it.
  SimBlockMap block_map() const;

  // last arrival + 2 * sum(output + 1) + 2: every step with a sequence running stores at
  // least one token of the oldest-admitted one (it can always preempt the rest), except the
  // step in which everything running was just admitted, and the queue never waits on an
  // empty memory.
  std::int64_t step_limit() const { return step_limit_; }

 private:
  void release_finished();
  void enqueue_arrivals();
  void decode();
  bool make_room(std::size_t index);
  void admit();
  void record();
  std::int64_t tokens(std::int64_t id) const;  // prompt + generated
  std::int64_t head_need() const;              // 0 when nobody waits

  SimPolicy policy_;
  SimConfig config_;
  std::vector<SimRequest> trace_;
  std::unique_ptr<SimAllocator> alloc_;
  std::int64_t step_limit_ = 0;

  std::vector<std::int64_t> generated_;     // [n_requests] tokens generated so far
  std::vector<std::uint8_t> was_admitted_;  // [n_requests]
  std::deque<std::int64_t> waiting_;        // request ids, head first
  std::vector<std::int64_t> running_;       // request ids, oldest admission first
  std::vector<std::int64_t> finishing_;     // finished in the last step, still holding memory
  std::size_t next_arrival_ = 0;            // index into trace_
  std::int64_t now_ = -1;                   // the step being run or last run

  SimFrame frame_;
  SimSummary summary_;
};

}  // namespace kvscope
