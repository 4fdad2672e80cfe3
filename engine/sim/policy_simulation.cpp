#include "sim/policy_simulation.h"

#include <algorithm>
#include <stdexcept>

#include "util/error.h"

namespace kvscope {

PolicySimulation::PolicySimulation(SimPolicy policy, std::vector<SimRequest> trace,
                                   const SimConfig& config)
    : policy_(policy), config_(config), trace_(std::move(trace)) {
  validate_sim_config(config_);
  validate_trace(trace_, config_.max_context);
  alloc_ = make_sim_allocator(policy_, config_);
  generated_.assign(trace_.size(), 0);
  was_admitted_.assign(trace_.size(), 0);
  step_limit_ = trace_.back().arrival + 2;
  for (const SimRequest& r : trace_) step_limit_ += 2 * (r.output + 1);
  summary_.capacity = config_.capacity;
  summary_.requests = static_cast<std::int64_t>(trace_.size());
  frame_.free = config_.capacity;
}

PolicySimulation::~PolicySimulation() = default;
PolicySimulation::PolicySimulation(PolicySimulation&&) noexcept = default;
PolicySimulation& PolicySimulation::operator=(PolicySimulation&&) noexcept = default;

bool PolicySimulation::done() const {
  return summary_.finished == summary_.requests;
}

std::int64_t PolicySimulation::tokens(std::int64_t id) const {
  return trace_[static_cast<std::size_t>(id)].prompt + generated_[static_cast<std::size_t>(id)];
}

const SimFrame& PolicySimulation::step() {
  if (done()) throw std::logic_error("simulation: step after every request finished");
  if (now_ + 1 >= step_limit_) {
    throw std::logic_error(fmt::format("simulation ({}): not done after {} steps",
                                       sim_policy_name(policy_), step_limit_));
  }
  ++now_;
  release_finished();
  enqueue_arrivals();
  decode();
  admit();
  record();
  return frame_;
}

void PolicySimulation::release_finished() {
  for (const std::int64_t id : finishing_) {
    alloc_->release(id);
    std::erase(running_, id);
  }
  finishing_.clear();
}

void PolicySimulation::enqueue_arrivals() {
  while (next_arrival_ < trace_.size() && trace_[next_arrival_].arrival <= now_) {
    waiting_.push_back(trace_[next_arrival_].id);
    ++next_arrival_;
  }
}

// Preempts the sequences admitted after running_[index], newest first, until it can grow.
// The engine's scheduler does the same (Scheduler::make_room): victims go to the front of
// the queue, so the oldest of them ends up first.
bool PolicySimulation::make_room(std::size_t index) {
  const std::int64_t id = running_[index];
  while (!alloc_->can_grow(id)) {
    if (running_.size() <= index + 1) return false;
    const std::int64_t victim = running_.back();
    alloc_->preempt(victim);
    running_.pop_back();
    waiting_.push_front(victim);
    ++frame_.preemptions;
  }
  return true;
}

void PolicySimulation::decode() {
  // running_ shrinks from the back while we walk it: index, not iterators.
  for (std::size_t i = 0; i < running_.size(); ++i) {
    const std::int64_t id = running_[i];
    if (!make_room(i)) continue;  // the newest, stuck behind older ones: waits a step
    alloc_->grow(id);
    const auto r = static_cast<std::size_t>(id);
    if (++generated_[r] == trace_[r].output) finishing_.push_back(id);
  }
}

void PolicySimulation::admit() {
  while (!waiting_.empty()) {
    const std::int64_t id = waiting_.front();
    const auto r = static_cast<std::size_t>(id);
    if (!alloc_->admit(trace_[r], tokens(id))) break;
    waiting_.pop_front();
    running_.push_back(id);
    if (was_admitted_[r]) {
      frame_.recomputed += tokens(id);
    } else {
      was_admitted_[r] = 1;
      ++frame_.admitted;
      summary_.total_wait += now_ - trace_[r].arrival;
    }
  }
}

std::int64_t PolicySimulation::head_need() const {
  if (waiting_.empty()) return 0;
  const std::int64_t id = waiting_.front();
  return alloc_->admission_need(trace_[static_cast<std::size_t>(id)], tokens(id));
}

void PolicySimulation::record() {
  const SimMemory m = alloc_->memory();
  const std::int64_t need = head_need();
  frame_.step = now_;
  frame_.stored = m.stored;
  frame_.reserved = m.reserved;
  frame_.internal = m.internal;
  frame_.external = need > 0 ? alloc_->external(need) : 0;
  frame_.free = config_.capacity - frame_.taken();
  frame_.running = static_cast<std::int64_t>(running_.size());
  frame_.waiting = static_cast<std::int64_t>(waiting_.size());
  frame_.finished += static_cast<std::int64_t>(finishing_.size());
  accumulate(summary_, frame_);
}

SimBlockMap PolicySimulation::block_map() const {
  return alloc_->block_map(head_need());
}

}  // namespace kvscope
