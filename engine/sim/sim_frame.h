// What one simulation step looks like: where every token slot of the memory went, the
// queue, and (on request) a map of which sequence holds which slots.
//
// Every slot of the capacity is in exactly one of five states at the end of a step:
//   stored    holds the K and V of a token;
//   reserved  held by a sequence for tokens it will still generate (contiguous policies
//             reserve them at admission; the paged policy reserves nothing ahead);
//   internal  held but never to be filled: reserve-max's slots beyond the sequence's final
//             length (prompt + output), and the paged policy's empty tail-block slots;
//   external  free, but where no waiting request can use it: while the request at the
//             head of the queue waits, the free holes too small for what it needs
//             (contiguous), or the capacity % block_size slots no block covers (paged; its
//             free blocks serve any sequence wherever they lie). 0 when nobody waits;
//   free      the rest.
// vLLM's paper charts the same split (token states / reservation / internal / external).
#pragma once

#include <cstdint>
#include <vector>

namespace kvscope {

struct SimFrame {
  std::int64_t step = 0;
  std::int64_t stored = 0;
  std::int64_t reserved = 0;
  std::int64_t internal = 0;
  std::int64_t external = 0;
  std::int64_t free = 0;
  std::int64_t running = 0;      // sequences holding memory in this step
  std::int64_t waiting = 0;      // arrived and not running (queued or preempted)
  std::int64_t admitted = 0;     // requests admitted at least once, so far
  std::int64_t finished = 0;     // requests done, so far (this step's included)
  std::int64_t preemptions = 0;  // so far
  std::int64_t recomputed = 0;   // tokens stored again after a preemption, so far

  // Memory the policy has taken away from other requests.
  std::int64_t taken() const { return stored + reserved + internal + external; }
};

// A run of slots one sequence holds: a contiguous reservation, or one paged block.
struct SimSpan {
  std::int64_t start = 0;   // first slot (paged: block id * block_size)
  std::int64_t size = 0;    // slots
  std::int64_t owner = -1;  // request id
  std::int64_t stored = 0;  // slots holding tokens, counted from start
  // Slots that will hold tokens when the owner is done, counted from start (stored <=
  // needed <= size): [stored, needed) is reserved, [needed, size) internal.
  std::int64_t needed = 0;
};

struct SimBlockMap {
  std::int64_t capacity = 0;   // token slots
  std::int64_t usable = 0;     // slots an allocator can hand out: [0, usable)
  std::int64_t unit = 1;       // paged: block size (every span is one block); contiguous: 1
  bool paged = false;          // whether free slots serve any sequence wherever they lie
  std::int64_t head_need = 0;  // slots the waiting head request needs; 0 when none waits
  std::vector<SimSpan> spans;  // held memory, ascending start, never overlapping
};

// A maximal run of free slots.
struct SimHole {
  std::int64_t start = 0;
  std::int64_t size = 0;
  bool external = false;  // unusable for the waiting head request (see above)
};

// The free runs of a map in address order, [0, capacity) minus its spans. Their external
// sizes sum to the frame's `external`.
std::vector<SimHole> sim_holes(const SimBlockMap& map);

}  // namespace kvscope
