// A linear address space of token slots handed out first fit: a reservation takes the
// lowest-addressed free run that holds it whole. Released runs become holes between the
// reservations still held; neighbouring free runs are one hole (holes are the gaps, so
// they merge by construction). This is where external fragmentation comes from.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

namespace kvscope {

class ContiguousArena {
 public:
  struct Run {
    std::int64_t start = 0;
    std::int64_t size = 0;
  };

  // capacity >= 0 slots (UsageError otherwise).
  explicit ContiguousArena(std::int64_t capacity);

  std::int64_t capacity() const { return capacity_; }
  std::int64_t used_slots() const { return used_slots_; }
  std::int64_t free_slots() const { return capacity_ - used_slots_; }

  // The start of a new reservation of `size` >= 1 slots, or nullopt when no hole holds it.
  std::optional<std::int64_t> allocate(std::int64_t size);
  // Releases the reservation starting at `start` (std::logic_error if there is none).
  void release(std::int64_t start);

  // Free runs in address order.
  std::vector<Run> holes() const;
  // Reservations in address order.
  std::vector<Run> reservations() const;

 private:
  std::int64_t capacity_;
  std::int64_t used_slots_ = 0;
  std::map<std::int64_t, std::int64_t> used_;  // start -> size, ascending
};

}  // namespace kvscope
