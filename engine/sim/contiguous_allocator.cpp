#include "sim/contiguous_allocator.h"

#include <algorithm>
#include <stdexcept>

namespace kvscope {

ContiguousAllocator::ContiguousAllocator(std::int64_t capacity, std::int64_t max_context,
                                         bool reserve_max)
    : arena_(capacity), max_context_(max_context), reserve_max_(reserve_max) {}

const ContiguousAllocator::Sequence& ContiguousAllocator::at(std::int64_t id) const {
  const auto it = seqs_.find(id);
  if (it == seqs_.end()) throw std::logic_error("contiguous allocator: unknown sequence");
  return it->second;
}

std::int64_t ContiguousAllocator::admission_need(const SimRequest& r, std::int64_t) const {
  return reserve_max_ ? max_context_ : r.length();
}

bool ContiguousAllocator::admit(const SimRequest& r, std::int64_t stored) {
  if (seqs_.contains(r.id)) throw std::logic_error("contiguous allocator: sequence admitted twice");
  const std::int64_t size = admission_need(r, stored);
  const auto start = arena_.allocate(size);
  if (!start) return false;
  seqs_.emplace(r.id, Sequence{*start, size, stored, r.length()});
  return true;
}

bool ContiguousAllocator::can_grow(std::int64_t id) const {
  const Sequence& s = at(id);
  return s.stored < s.size;
}

void ContiguousAllocator::grow(std::int64_t id) {
  if (!can_grow(id)) throw std::logic_error("contiguous allocator: growth past the reservation");
  ++seqs_.at(id).stored;
}

void ContiguousAllocator::preempt(std::int64_t) {
  throw std::logic_error("contiguous allocator: reservations are whole, nothing is preempted");
}

void ContiguousAllocator::release(std::int64_t id) {
  arena_.release(at(id).start);
  seqs_.erase(id);
}

SimMemory ContiguousAllocator::memory() const {
  SimMemory m;
  for (const auto& [id, s] : seqs_) {
    m.stored += s.stored;
    m.reserved += std::max<std::int64_t>(0, s.length - s.stored);
    m.internal += s.size - std::max(s.length, s.stored);
  }
  return m;
}

std::int64_t ContiguousAllocator::external(std::int64_t need) const {
  std::int64_t slots = 0;
  for (const ContiguousArena::Run& h : arena_.holes()) {
    if (h.size < need) slots += h.size;
  }
  return slots;
}

SimBlockMap ContiguousAllocator::block_map(std::int64_t head_need) const {
  SimBlockMap map;
  map.capacity = arena_.capacity();
  map.usable = arena_.capacity();
  map.unit = 1;
  map.paged = false;
  map.head_need = head_need;
  for (const auto& [id, s] : seqs_) {
    map.spans.push_back({s.start, s.size, id, s.stored, std::min(s.size, s.length)});
  }
  std::sort(map.spans.begin(), map.spans.end(),
            [](const SimSpan& a, const SimSpan& b) { return a.start < b.start; });
  return map;
}

}  // namespace kvscope
