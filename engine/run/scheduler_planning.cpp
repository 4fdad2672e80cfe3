// Scheduler: choosing what runs in a step (decode tokens first, then prompt chunks),
// admission of waiting requests, preemption and cancellation.
#include <algorithm>

#include "run/scheduler.h"
#include "run/scheduler_active.h"
#include "util/error.h"

namespace kvscope {

void Scheduler::apply_cancellations() {
  if (!has_cancel_.load(std::memory_order_acquire)) return;
  std::vector<RequestId> ids;
  {
    std::lock_guard lock(cancel_mutex_);
    ids.swap(cancel_requests_);
    has_cancel_.store(false, std::memory_order_release);
  }
  for (RequestId id : ids) {
    for (auto& a : running_) {
      if (a->id == id && a->finished == FinishReason::None) finish(*a, FinishReason::Cancelled);
    }
    for (auto& a : waiting_) {
      if (a->id == id && a->finished == FinishReason::None) finish(*a, FinishReason::Cancelled);
    }
  }
}

// Frees blocks for `a` to grow by n by preempting the newest other running sequences.
// False when no other sequence is left to preempt.
bool Scheduler::make_room(Active& a, std::int64_t n) {
  while (!kv_.can_grow(a.seq, n)) {
    Active* victim = nullptr;
    for (auto it = running_.rbegin(); it != running_.rend(); ++it) {
      if (it->get() != &a && (*it)->finished == FinishReason::None) {
        victim = it->get();
        break;
      }
    }
    if (victim == nullptr) return false;
    preempt(*victim);
  }
  return true;
}

// Frees the sequence's blocks and queues it first in line; its tokens are recomputed when
// it is admitted again. Its output does not change: the same tokens go in again.
void Scheduler::preempt(Active& a) {
  kv_.preempt(a.seq);
  a.recomputed += a.n_cached;
  a.n_cached = 0;
  ++stats_.preemptions;
  auto it =
      std::find_if(running_.begin(), running_.end(), [&](const auto& p) { return p.get() == &a; });
  waiting_.push_front(std::move(*it));
  running_.erase(it);
}

void Scheduler::plan_decodes(std::vector<Planned>& plan, std::int64_t& budget) {
  // Snapshot of the decoding sequences, oldest first: preemption may reorder running_.
  std::vector<Active*> decoding;
  for (auto& a : running_) {
    if (a->finished == FinishReason::None && a->n_cached > 0 && a->n_pending() == 1) {
      decoding.push_back(a.get());
    }
  }
  for (Active* a : decoding) {
    if (budget < 1) break;
    const bool still_running =
        std::any_of(running_.begin(), running_.end(), [&](const auto& p) { return p.get() == a; });
    if (!still_running) continue;  // preempted to make room for an older sequence
    if (!make_room(*a, 1)) {
      finish(*a, FinishReason::ContextFull,
             fmt::format("the KV cache is full: {} tokens use all {} blocks", a->n_cached,
                         kv_.pool(0).n_blocks()));
      continue;
    }
    plan.push_back({a, 1});
    --budget;
  }
  // A preempted sequence may have been planned before it was preempted: drop it.
  std::erase_if(plan, [&](const Planned& p) { return p.active->n_cached == 0; });
}

// The largest n <= want by which `a` can grow now without preempting anyone.
std::int64_t Scheduler::fitting_chunk(const Active& a, std::int64_t want) const {
  if (kv_.can_grow(a.seq, want)) return want;
  std::int64_t lo = 0, hi = want;  // can_grow(lo) holds, can_grow(hi) does not
  while (hi - lo > 1) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    (kv_.can_grow(a.seq, mid) ? lo : hi) = mid;
  }
  return lo;
}

void Scheduler::plan_prefills(std::vector<Planned>& plan, std::int64_t& budget) {
  // Running sequences part-way through their prompt (or a recompute) continue first.
  for (auto& p : running_) {
    Active& a = *p;
    if (budget < 1) return;
    if (a.finished != FinishReason::None || (a.n_pending() <= 1 && a.n_cached > 0)) continue;
    std::int64_t n = fitting_chunk(a, std::min(a.n_pending(), budget));
    if (n == 0 && plan.empty()) {
      if (!make_room(a, 1)) {
        finish(a, FinishReason::ContextFull, "the KV cache is full");
        continue;
      }
      n = fitting_chunk(a, std::min(a.n_pending(), budget));
    }
    if (n == 0) continue;
    plan.push_back({&a, n});
    budget -= n;
  }
  // Then waiting requests are admitted in order while blocks and batch room last.
  while (budget > 0 && !waiting_.empty() &&
         static_cast<std::int64_t>(running_.size()) < options_.max_running) {
    Active& a = *waiting_.front();
    if (a.finished != FinishReason::None) {
      running_.push_back(std::move(waiting_.front()));
      waiting_.pop_front();
      continue;
    }
    if (a.in_kv) {
      kv_.resume(a.seq);
    } else {
      kv_.add_sequence(a.seq);
      a.in_kv = true;
    }
    const std::int64_t n = fitting_chunk(a, std::min(a.n_pending(), budget));
    if (n == 0) {
      kv_.preempt(a.seq);  // holds nothing; stays queued until blocks are free
      break;
    }
    plan.push_back({&a, n});
    budget -= n;
    running_.push_back(std::move(waiting_.front()));
    waiting_.pop_front();
  }
}

void Scheduler::remove_finished() {
  std::erase_if(running_, [](const auto& a) { return a->finished != FinishReason::None; });
  std::erase_if(waiting_, [](const auto& a) { return a->finished != FinishReason::None; });
}

}  // namespace kvscope
