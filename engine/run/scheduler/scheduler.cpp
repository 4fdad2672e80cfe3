#include "run/scheduler/scheduler.h"

#include "run/scheduler/scheduler_active.h"

#include <algorithm>
#include <atomic>
#include <utility>

#include "cpu/cpu_ops.h"
#include "run/sampler.h"
#include "text/utf8_stream.h"
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
      padded_rows_(logits_per_row > n_spellable_) {
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
  // The prompt must fit the pool alone (a sliding window holds at most window + one block).
  for (std::int64_t g = 0; g < kv_.n_groups(); ++g) {
    const std::int64_t bs = kv_.layout(g).block_size;
    const std::int64_t window = kv_.config().groups[static_cast<std::size_t>(g)].window;
    const std::int64_t tokens = window > 0 ? std::min(n_prompt, window + bs) : n_prompt;
    const std::int64_t need = (tokens + bs - 1) / bs;
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
  child->utf8 = parent->utf8;
  child->text = parent->text;
  child->n_emitted = parent->n_emitted;
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
  for (const Kept& k : kept_) {
    if (k.id == id) return k.seq;
  }
  return -1;
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

  std::int64_t budget = options_.max_batch_tokens;
  std::vector<Planned> plan;
  copies_.clear();
  plan_decodes(plan, budget);
  plan_prefills(plan, budget);
  remove_finished();  // sequences that ended with ContextFull while planning (never planned)
  if (plan.empty()) return !idle();

  run_forward(plan);
  remove_finished();
  return true;
}

// Runs the planned chunks (already reserved in the cache) and consumes their logits, or only
// their greedy picks. If the backend fails, the step's requests end with its message: their
// cache no longer matches their tokens, and the other requests must not be stopped by an
// exception.
void Scheduler::run_forward(const std::vector<Planned>& plan) {
  std::vector<SequenceChunk> chunks;
  chunks.reserve(plan.size());
  for (const Planned& p : plan) {
    const Active& a = *p.active;
    const std::span<const TokenId> all(a.tokens);
    chunks.push_back(
        {a.seq, all.subspan(static_cast<std::size_t>(a.n_cached), static_cast<std::size_t>(p.n)),
         a.n_cached, false, a.n_cached < a.n_prompt ? a.n_prompt : 0});
    (p.n == 1 && a.n_cached >= a.n_prompt ? stats_.decode_tokens : stats_.prompt_tokens) += p.n;
  }
  const bool greedy = picks_greedily(plan);
  try {
    backend_.copy_blocks(copies_);
    if (greedy) {
      backend_.forward_greedy(chunks, kv_, picks_);
      if (picks_.size() != plan.size()) {
        throw_error<Error>("the backend returned {} greedy picks for {} sequences", picks_.size(),
                           plan.size());
      }
    } else {
      backend_.forward(chunks, kv_, logits_);
    }
  } catch (const std::exception& e) {
    for (const Planned& p : plan) {
      finish(*p.active, FinishReason::Error, fmt::format("the forward pass failed: {}", e.what()));
    }
    return;
  }
  ++stats_.steps;
  if (greedy) {
    consume_picks(plan, picks_);
  } else {
    consume_logits(plan, logits_);
  }
}

// Whether the step needs only each row's greedy pick: every request picks greedily and none
// wants log-probabilities, and the model has no rows past the tokenizer's vocab (the pick
// could be one). Then a GPU backend copies one id per row, not the logits.
bool Scheduler::picks_greedily(const std::vector<Planned>& plan) const {
  return !padded_rows_ && std::all_of(plan.begin(), plan.end(), [](const Planned& p) {
    return p.active->sampler.picks_greedily() && p.active->request.top_logprobs == 0;
  });
}

}  // namespace kvscope
