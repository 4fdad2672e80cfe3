// Scheduler, emit: turning a step's logits (or greedy picks) into tokens, streamed text
// (through each request's ReplyStream) and finished requests; kept prefixes handed over.
#include <algorithm>

#include "cpu/cpu_ops.h"
#include "run/greedy.h"
#include "run/scheduler/scheduler.h"
#include "run/scheduler/scheduler_active.h"
#include "util/error.h"

namespace kvscope {

namespace {

void top_logprobs(std::span<const float> logits, TokenId chosen, int k, TokenEvent& ev) {
  std::vector<float> lp(logits.size());
  log_softmax(logits, lp);
  ev.logprob = lp[static_cast<std::size_t>(chosen)];
  std::vector<TokenId> ids(logits.size());
  for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<TokenId>(i);
  const auto kk = std::min<std::size_t>(static_cast<std::size_t>(k), ids.size());
  std::partial_sort(
      ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(kk), ids.end(),
      [&](TokenId a, TokenId b) { return lp[a] > lp[b] || (lp[a] == lp[b] && a < b); });
  for (std::size_t i = 0; i < kk; ++i) ev.top.emplace_back(ids[i], lp[ids[i]]);
}

}  // namespace

bool Scheduler::advance(Active& a, std::int64_t n) {
  a.n_cached += n;
  return a.n_pending() == 0 && a.finished == FinishReason::None;
}

// Each chunk that finished its pending tokens chooses the next one: from its logits row, or
// the backend's greedy pick.
void Scheduler::emit_tokens(const StepPlan& plan, bool greedy) {
  const std::size_t vocab = greedy ? 0 : logits_.size() / plan.chunks.size();
  for (std::size_t r = 0; r < plan.chunks.size(); ++r) {
    Active& a = *plan.chunks[r].active;
    if (!advance(a, plan.chunks[r].n)) continue;  // the prompt continues
    if (!greedy) {
      accept_token(a, std::span<const float>(logits_).subspan(r * vocab, vocab));
      continue;
    }
    const TokenId pick = picks_[r];
    if (pick < 0) {  // a NaN / inf row: this request cannot go on
      finish(a, FinishReason::Error, greedy_pick_error(pick));
      continue;
    }
    TokenEvent ev;
    append_token(a, pick, ev);
  }
}

void Scheduler::accept_token(Active& a, std::span<const float> row) {
  const GenerationRequest& req = a.request;
  // Rows past the tokenizer's vocab (a padded model) are ids nothing can spell: left out.
  const std::span<const float> logits =
      row.first(std::min(row.size(), static_cast<std::size_t>(n_spellable_)));
  const std::int64_t n_recent =
      req.sampling.repeat_last_n < 0
          ? static_cast<std::int64_t>(a.tokens.size())
          : std::min<std::int64_t>(req.sampling.repeat_last_n,
                                   static_cast<std::int64_t>(a.tokens.size()));
  const std::span<const TokenId> recent =
      std::span<const TokenId>(a.tokens).last(static_cast<std::size_t>(n_recent));
  TokenId token = -1;
  try {
    token = a.sampler.sample(logits, recent);
  } catch (const std::exception& e) {  // NaN / inf logits: this request cannot go on
    finish(a, FinishReason::Error, e.what());
    return;
  }
  TokenEvent ev;
  if (req.top_logprobs > 0) top_logprobs(logits, token, req.top_logprobs, ev);
  append_token(a, token, ev);
}

// The chosen token joins the sequence: streamed, checked against the stop conditions.
void Scheduler::append_token(Active& a, TokenId token, TokenEvent& ev) {
  const GenerationRequest& req = a.request;
  ev.request = a.id;
  ev.token = token;
  if (token < 0 || token >= n_spellable_) {  // a backend's pick past the tokenizer's vocab
    finish(a, FinishReason::Error,
           fmt::format("the model chose token id {}, which its tokenizer ({} tokens) cannot "
                       "spell; this request ends here",
                       token, n_spellable_));
    return;
  }
  if (req.stop_at_end_of_generation && tokenizer_.is_end_of_generation(token)) {
    finish(a, FinishReason::EndOfGeneration);
    return;
  }
  a.tokens.push_back(token);
  const bool stopped = a.reply.push(tokenizer_.token_bytes(token), ev.text);
  if (a.callbacks.on_token) a.callbacks.on_token(ev);
  if (stopped) {
    finish(a, FinishReason::StopString);
  } else if (a.n_generated() >= req.max_tokens) {
    finish(a, FinishReason::Length);
  } else if (a.n_cached >= kv_.config().max_context) {
    // Every position of the context is cached: the next token has nowhere to go.
    finish(a, FinishReason::ContextFull,
           fmt::format("reached the context length: all {} tokens of the context are used",
                       kv_.config().max_context));
  }
}

void Scheduler::finish(Active& a, FinishReason reason, std::string error) {
  std::string held = a.reply.finish(reason == FinishReason::StopString);
  if (!held.empty() && a.callbacks.on_token) {
    TokenEvent tail;  // token -1: text held back (stop-string prefix, partial UTF-8) released
    tail.request = a.id;
    tail.text = std::move(held);
    a.callbacks.on_token(tail);
  }
  if (a.in_kv) keep_or_free(a, reason);
  a.in_kv = false;
  a.finished = reason;
  if (a.callbacks.on_finish) {
    RequestResult r;
    r.request = a.id;
    r.reason = reason;
    r.error = std::move(error);
    r.generated.assign(a.tokens.begin() + a.n_prompt, a.tokens.end());
    r.text = a.reply.text();
    r.prompt_tokens = a.n_prompt;
    r.recomputed_tokens = a.recomputed;
    r.reused_tokens = a.reused;
    a.callbacks.on_finish(r);
  }
}

// Called when `a` ends while its sequence is in the cache: kept as a prefix when the
// request asked for it and its cache is whole, else freed.
void Scheduler::keep_or_free(Active& a, FinishReason reason) {
  const bool keep = a.request.keep_cache && reason != FinishReason::Error && a.n_cached > 0 &&
                    !kv_.is_preempted(a.seq);
  if (!keep) {
    kv_.free_sequence(a.seq);
    return;
  }
  prefixes_.keep(a.id, a.seq,
                 std::span<const TokenId>(a.tokens).first(static_cast<std::size_t>(a.n_cached)));
}

}  // namespace kvscope
