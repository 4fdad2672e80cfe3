#include "sim/contiguous_arena.h"

#include <stdexcept>

#include "util/error.h"

namespace kvscope {

ContiguousArena::ContiguousArena(std::int64_t capacity) : capacity_(capacity) {
  if (capacity < 0) throw_error<UsageError>("contiguous arena: capacity {} < 0", capacity);
}

std::optional<std::int64_t> ContiguousArena::allocate(std::int64_t size) {
  if (size < 1) throw std::logic_error("contiguous arena: allocation of < 1 slot");
  std::int64_t at = 0;  // start of the gap before the reservation `start`
  for (const auto& [start, held] : used_) {
    if (start - at >= size) break;
    at = start + held;
  }
  // Either the loop stopped at the first gap that fits, or `at` is the start of the last
  // gap, [at, capacity).
  const auto next = used_.lower_bound(at);
  const std::int64_t gap_end = next == used_.end() ? capacity_ : next->first;
  if (gap_end - at < size) return std::nullopt;
  used_.emplace(at, size);
  used_slots_ += size;
  return at;
}

void ContiguousArena::release(std::int64_t start) {
  const auto it = used_.find(start);
  if (it == used_.end()) throw std::logic_error("contiguous arena: release of a free address");
  used_slots_ -= it->second;
  used_.erase(it);
}

std::vector<ContiguousArena::Run> ContiguousArena::holes() const {
  std::vector<Run> out;
  std::int64_t at = 0;
  for (const auto& [start, size] : used_) {
    if (start > at) out.push_back({at, start - at});
    at = start + size;
  }
  if (capacity_ > at) out.push_back({at, capacity_ - at});
  return out;
}

std::vector<ContiguousArena::Run> ContiguousArena::reservations() const {
  std::vector<Run> out;
  out.reserve(used_.size());
  for (const auto& [start, size] : used_) out.push_back({start, size});
  return out;
}

}  // namespace kvscope
