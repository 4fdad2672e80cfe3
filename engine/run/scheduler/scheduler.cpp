#include "run/scheduler/scheduler.h"

#include "run/scheduler/scheduler_active.h"

#include <algorithm>
#include <atomic>
#include <utility>

#include "cpu/cpu_ops.h"
#include "run/sampler.h"
#include "util/error.h"

namespace kvscope {

namespace {

// Request ids are unique in the process, not per engine: a cancel posted by a request's
// server thread can arrive after a model switch has replaced the engine, and with ids
// counted per engine it would cancel the new engine's request of the same number (seen as
// a fresh request answered 503 "cancelled" right after the app switched models).
RequestId new_request_id() {
  static std::atomic<RequestId> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace

std::string_view finish_reason_name(FinishReason reason) {
  switch (reason) {
    case FinishReason::None:
      return "none";
    case FinishReason::Length:
      return "length";
    case FinishReason::EndOfGeneration:
      return "end of generation";
    case FinishReason::StopString:
      return "stop string";
    case FinishReason::ContextFull:
      return "context full";
    case FinishReason::Cancelled:
      return "cancelled";
    case FinishReason::Error:
      return "error";
  }
  return "unknown";
}

Scheduler::Scheduler(Backend& backend, KvCacheManager& kv, const Tokenizer& tokenizer,
                     SchedulerOptions options, std::int64_t logits_per_row)
    : backend_(backend),
      kv_(kv),
      tokenizer_(tokenizer),
      options_(options),
      n_spellable_(tokenizer.vocab_size()),
      n_ids_(logits_per_row > 0 ? std::min(n_spellable_, logits_per_row) : n_spellable_),
      padded_rows_(logits_per_row > n_spellable_),
      prefixes_(kv) {
  if (options_.max_batch_tokens < 1 || options_.max_running < 1) {
    throw_error<UsageError>("scheduler: max_batch_tokens ({}) and max_running ({}) must be >= 1",
                            options_.max_batch_tokens, options_.max_running);
  }
}

Scheduler::~Scheduler() = default;

RequestId Scheduler::submit(GenerationRequest request, RequestCallbacks callbacks) {
  validate(request.sampling);
  if (request.max_tokens < 1) {
    throw_error<UsageError>("max_tokens is {}: a request generates at least one token",
                            request.max_tokens);
  }
  const auto n_prompt = static_cast<std::int64_t>(request.prompt.size());
  if (n_prompt == 0) throw_error<UsageError>("the prompt is empty: nothing to generate from");
  const std::int64_t vocab = n_ids_;
  for (std::int64_t i = 0; i < n_prompt; ++i) {
    const TokenId id = request.prompt[static_cast<std::size_t>(i)];
    if (id < 0 || id >= vocab) {
      throw_error<UsageError>("prompt token {} is id {}, outside the vocabulary [0, {})", i, id,
                              vocab);
    }
  }
  const std::int64_t ctx = kv_.config().max_context;
  if (n_prompt > ctx) {
    throw_error<CapacityError>("the prompt has {} tokens but the context holds {}", n_prompt, ctx);
  }
  // The prompt must fit the pool alone (a sliding window holds at most its cap, read in
  // chunks of max_batch_tokens).
  KvCacheConfig chunked = kv_.config();
  chunked.max_grow_tokens = options_.max_batch_tokens;
  for (std::int64_t g = 0; g < kv_.n_groups(); ++g) {
    const std::int64_t bs = kv_.layout(g).block_size;
    const std::int64_t need = std::min(
        (n_prompt + bs - 1) / bs, kv_sequence_cap_blocks(chunked, static_cast<std::size_t>(g)));
    if (need > kv_.pool(g).n_blocks()) {
      throw_error<CapacityError>(
          "the KV cache has {} blocks of {} tokens but this prompt of {} tokens needs {}: "
          "raise the memory budget or use a smaller KV dtype",
          kv_.pool(g).n_blocks(), bs, n_prompt, need);
    }
  }
  auto a = std::make_unique<Active>(std::move(request), std::move(callbacks));
  a->id = new_request_id();
  a->seq = next_seq_++;
  a->tokens = a->request.prompt;
  a->n_prompt = n_prompt;
  const RequestId id = a->id;
  waiting_.push_back(std::move(a));
  return id;
}

RequestId Scheduler::fork(RequestId parent_id, RequestCallbacks callbacks) {
  Active* parent = find_running(parent_id);
  if (parent == nullptr || parent->n_cached == 0) {
    throw_error<UsageError>("request {} cannot be forked: it is not running with cached tokens",
                            parent_id);
  }
  auto child = std::make_unique<Active>(parent->request, std::move(callbacks));
  child->id = new_request_id();
  child->seq = next_seq_++;
  child->tokens = parent->tokens;
  child->n_prompt = parent->n_prompt;
  child->n_cached = parent->n_cached;
  child->sampler = parent->sampler;
  child->reply = parent->reply;
  kv_.fork(parent->seq, child->seq);
  child->in_kv = true;
  const RequestId id = child->id;
  running_.push_back(std::move(child));
  return id;
}

void Scheduler::cancel(RequestId id) {
  std::lock_guard lock(cancel_mutex_);
  cancel_requests_.push_back(id);
  has_cancel_.store(true, std::memory_order_release);
}

SeqId Scheduler::sequence_of(RequestId id) const {
  for (const auto& a : running_) {
    if (a->id == id) return a->seq;
  }
  for (const auto& a : waiting_) {
    if (a->id == id) return a->seq;
  }
  return prefixes_.sequence_of(id);
}

Scheduler::Active* Scheduler::find_running(RequestId id) {
  for (auto& a : running_) {
    if (a->id == id) return a.get();
  }
  return nullptr;
}

bool Scheduler::step() {
  apply_cancellations();
  remove_finished();
  if (idle()) return false;

  // Plan: each chunk is reserved in the cache as it is planned (kept prefixes evicted and
  // newer sequences preempted to make room), so the step never needs more than the pool.
  StepPlan plan{.chunks = {}, .budget = options_.max_batch_tokens};
  copies_.clear();
  plan_decodes(plan);   // one token for each decoding sequence, oldest first
  plan_prefills(plan);  // the next prompt chunks of running sequences
  admit_waiting(plan);  // new and preempted requests, while blocks and budget last
  remove_finished();    // sequences that ended with ContextFull while planning
  if (plan.chunks.empty()) return !idle();

  // Run, then emit: sample each finished row, stream its text, finish what is done.
  const bool greedy = picks_greedily(plan);
  if (run_forward(plan, greedy)) emit_tokens(plan, greedy);
  remove_finished();
  return true;
}

// Runs the planned chunks (already reserved in the cache): logits_ [chunks][vocab], or only
// their greedy picks, picks_ [chunks]. If the backend fails, the step's requests end with its
// message (their cache no longer matches their tokens) and false is returned; the other
// requests must not be stopped by an exception.
bool Scheduler::run_forward(const StepPlan& plan, bool greedy) {
  std::vector<SequenceChunk> chunks;
  chunks.reserve(plan.chunks.size());
  for (const Planned& p : plan.chunks) {
    const Active& a = *p.active;
    const std::span<const TokenId> all(a.tokens);
    chunks.push_back(
        {a.seq, all.subspan(static_cast<std::size_t>(a.n_cached), static_cast<std::size_t>(p.n)),
         a.n_cached, false, a.n_prompt});
    (p.n == 1 && a.n_cached >= a.n_prompt ? stats_.decode_tokens : stats_.prompt_tokens) += p.n;
  }
  try {
    backend_.copy_blocks(copies_);
    if (greedy) {
      backend_.forward_greedy(chunks, kv_, picks_);
      if (picks_.size() != chunks.size()) {
        throw_error<Error>("the backend returned {} greedy picks for {} sequences", picks_.size(),
                           chunks.size());
      }
    } else {
      backend_.forward(chunks, kv_, logits_);
    }
  } catch (const std::exception& e) {
    for (const Planned& p : plan.chunks) {
      finish(*p.active, FinishReason::Error, fmt::format("the forward pass failed: {}", e.what()));
    }
    return false;
  }
  ++stats_.steps;
  return true;
}

// Whether the step needs only each row's greedy pick: every request picks greedily and none
// wants log-probabilities, and the model has no rows past the tokenizer's vocab (the pick
// could be one). Then a GPU backend copies one id per row, not the logits.
bool Scheduler::picks_greedily(const StepPlan& plan) const {
  return !padded_rows_ && std::all_of(plan.chunks.begin(), plan.chunks.end(), [](const Planned& p) {
    return p.active->sampler.picks_greedily() && p.active->request.top_logprobs == 0;
  });
}

}  // namespace kvscope
