// Scheduler: choosing what runs in a step (decode tokens first, then prompt chunks),
// admission of waiting requests, preemption and cancellation.
//
// Every planned chunk is grown in the KV cache at once (reserve), so the next sequence's
// fitting check sees the blocks that are really left. Preemption only takes sequences
// admitted after the one that needs room; those have not been planned yet in this step
// (decodes are planned oldest first, and a prompt chunk preempts only when nothing else is
// planned), so a planned chunk never loses its blocks.
//
// Loops over running_ / waiting_ go over snapshots of pointers: preemption moves sequences
// between the two, and finish() runs callbacks that may submit or fork.
#include <algorithm>
#include <utility>

#include "run/scheduler/scheduler.h"
#include "run/scheduler/scheduler_active.h"
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
  std::vector<Active*> live;
  for (auto& a : running_) live.push_back(a.get());
  for (auto& a : waiting_) live.push_back(a.get());
  for (Active* a : live) {
    if (a->finished == FinishReason::None && std::ranges::find(ids, a->id) != ids.end()) {
      finish(*a, FinishReason::Cancelled);
    }
  }
}

bool Scheduler::is_running(const Active* a) const {
  return std::ranges::any_of(running_, [&](const auto& p) { return p.get() == a; });
}

bool Scheduler::others_running(const Active& a) const {
  return std::ranges::any_of(
      running_, [&](const auto& p) { return p.get() != &a && p->finished == FinishReason::None; });
}

// Grows `a` by n now and plans the chunk.
void Scheduler::reserve(StepPlan& plan, Active& a, std::int64_t n) {
  kv_.grow(a.seq, n, &copies_);
  plan.chunks.push_back({&a, n});
  plan.budget -= n;
}

// Live sequences come before kept prefixes: release prefixes until `a` can grow by n.
void Scheduler::evict_prefixes_for(const Active& a, std::int64_t n) {
  stats_.evictions += prefixes_.evict_until_fits(a.seq, n);
}

// Frees blocks for `a` to grow by n: kept prefixes first, then by preempting the running
// sequences admitted after it, newest first. False when it still cannot grow (no newer sequence
// left, or the context length is reached).
bool Scheduler::make_room(Active& a, std::int64_t n) {
  if (a.n_cached + n > kv_.config().max_context) return false;
  evict_prefixes_for(a, n);
  while (!kv_.can_grow(a.seq, n)) {
    Active* victim = nullptr;
    for (auto it = running_.rbegin(); it != running_.rend() && it->get() != &a; ++it) {
      if ((*it)->finished == FinishReason::None) {
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

// `a` cannot grow and nothing else holds blocks it could have.
void Scheduler::end_full(Active& a) {
  const KvBlockLayout& layout = kv_.layout(0);
  finish(a, FinishReason::ContextFull,
         fmt::format("the KV cache is full: this sequence's {} tokens fill all {} blocks of {} "
                     "tokens; raise the memory budget or use a smaller KV dtype",
                     a.n_cached, kv_.pool(0).n_blocks(), layout.block_size));
}

void Scheduler::plan_decodes(StepPlan& plan) {
  std::vector<Active*> decoding;  // oldest first
  for (auto& a : running_) {
    if (a->finished == FinishReason::None && a->n_cached > 0 && a->n_pending() == 1) {
      decoding.push_back(a.get());
    }
  }
  for (Active* a : decoding) {
    if (plan.budget < 1) break;
    if (!is_running(a)) continue;  // preempted to make room for an older sequence
    if (!make_room(*a, 1)) {
      // The blocks are held by older sequences: wait for them to finish or to preempt this
      // one. Alone, it can never grow.
      if (!others_running(*a)) end_full(*a);
      continue;
    }
    reserve(plan, *a, 1);
  }
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

void Scheduler::plan_prefills(StepPlan& plan) {
  // Running sequences part-way through their prompt (or a recompute) continue first.
  std::vector<Active*> prefilling;
  for (auto& a : running_) {
    if (a->finished == FinishReason::None && (a->n_pending() > 1 || a->n_cached == 0)) {
      prefilling.push_back(a.get());
    }
  }
  for (Active* a : prefilling) {
    if (plan.budget < 1) return;
    if (!is_running(a)) continue;
    evict_prefixes_for(*a, std::min(a->n_pending(), plan.budget));
    std::int64_t n = fitting_chunk(*a, std::min(a->n_pending(), plan.budget));
    if (n == 0 && plan.chunks.empty()) {
      // Nothing else runs in this step: take blocks from newer sequences.
      if (!make_room(*a, 1)) {
        if (!others_running(*a)) end_full(*a);
        continue;
      }
      n = fitting_chunk(*a, std::min(a->n_pending(), plan.budget));
    }
    if (n == 0) continue;
    reserve(plan, *a, n);
  }
}

// Waiting requests are admitted in order while blocks, step budget and batch room last.
void Scheduler::admit_waiting(StepPlan& plan) {
  while (plan.budget > 0 && !waiting_.empty() &&
         static_cast<std::int64_t>(running_.size()) < options_.max_running) {
    Active& a = *waiting_.front();
    if (a.finished != FinishReason::None) {
      running_.push_back(std::move(waiting_.front()));
      waiting_.pop_front();
      continue;
    }
    bool from_prefix = false;
    if (a.in_kv) {
      kv_.resume(a.seq);
    } else {
      start_sequence(a);
      a.in_kv = true;
      from_prefix = a.reused > 0;
    }
    evict_prefixes_for(a, std::min(a.n_pending(), plan.budget));
    const std::int64_t n = fitting_chunk(a, std::min(a.n_pending(), plan.budget));
    if (n == 0) {
      // Stays queued until blocks are free, holding none. A prefix it started from is let
      // go and looked for again at the next admission.
      if (from_prefix) {
        kv_.free_sequence(a.seq);
        a.in_kv = false;
        a.n_cached = 0;
        stats_.reused_tokens -= std::exchange(a.reused, 0);
      } else {
        kv_.preempt(a.seq);
      }
      break;
    }
    reserve(plan, a, n);
    running_.push_back(std::move(waiting_.front()));
    waiting_.pop_front();
  }
}

// Adds a's sequence to the cache: empty, or forked from the kept prefix sharing the most
// of its prompt. The prompt's last token always runs: its logits give the first token.
void Scheduler::start_sequence(Active& a) {
  const std::span<const TokenId> prefix(a.tokens.data(), static_cast<std::size_t>(a.n_prompt - 1));
  a.reused = prefixes_.start(a.seq, prefix);
  a.n_cached = a.reused;
  stats_.reused_tokens += a.reused;
}

void Scheduler::remove_finished() {
  std::erase_if(running_, [](const auto& a) { return a->finished != FinishReason::None; });
  std::erase_if(waiting_, [](const auto& a) { return a->finished != FinishReason::None; });
}

}  // namespace kvscope
