// The two contiguous policies: a sequence gets one run of slots at admission, placed first
// fit in a ContiguousArena, and keeps it until it finishes; it never grows out of it, so
// it never needs preempting.
//   reserve-max: the run is max_context slots. Slots up to the final length (prompt +
//                output) are reserved for tokens to come; the rest are internal waste.
//   exact-fit:   the run is exactly prompt + output slots (an oracle that knows the output
//                length): reserved slots, no internal waste, but holes of every size.
#pragma once

#include <cstdint>
#include <map>

#include "sim/contiguous_arena.h"
#include "sim/sim_allocator.h"

namespace kvscope {

class ContiguousAllocator final : public SimAllocator {
 public:
  ContiguousAllocator(std::int64_t capacity, std::int64_t max_context, bool reserve_max);

  bool admit(const SimRequest& r, std::int64_t stored) override;
  bool can_grow(std::int64_t id) const override;
  void grow(std::int64_t id) override;
  void preempt(std::int64_t id) override;
  void release(std::int64_t id) override;

  SimMemory memory() const override;
  std::int64_t admission_need(const SimRequest& r, std::int64_t stored) const override;
  std::int64_t external(std::int64_t need) const override;
  SimBlockMap block_map(std::int64_t head_need) const override;

 private:
  struct Sequence {
    std::int64_t start = 0;
    std::int64_t size = 0;    // reserved slots
    std::int64_t stored = 0;  // tokens held
    std::int64_t length = 0;  // prompt + output: what it holds when done
  };
  const Sequence& at(std::int64_t id) const;

  ContiguousArena arena_;
  std::int64_t max_context_;
  bool reserve_max_;
  std::map<std::int64_t, Sequence> seqs_;  // by request id
};

}  // namespace kvscope
