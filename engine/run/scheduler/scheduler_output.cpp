// Scheduler: turning a step's logits into tokens, streamed text and finished requests.
#include <algorithm>

#include "cpu/cpu_ops.h"
#include "run/greedy.h"
#include "run/scheduler/scheduler.h"
#include "run/scheduler/scheduler_active.h"
#include "util/error.h"

namespace kvscope {

namespace {

// Bytes at the end of `text` that could still grow into one of `stops`: they are held
// back from the stream until it is clear they are not the start of a stop string.
std::size_t held_for_stop(std::string_view text, const std::vector<std::string>& stops) {
  std::size_t held = 0;
  for (const auto& stop : stops) {
    if (stop.empty()) continue;
    for (std::size_t n = std::min(stop.size() - 1, text.size()); n > held; --n) {
      if (text.substr(text.size() - n) == std::string_view(stop).substr(0, n)) {
        held = n;
        break;
      }
    }
  }
  return held;
}

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

void Scheduler::consume_logits(const std::vector<Planned>& plan, const std::vector<float>& logits) {
  const auto vocab = logits.size() / plan.size();
  for (std::size_t r = 0; r < plan.size(); ++r) {
    Active& a = *plan[r].active;
    if (!advance(a, plan[r].n)) continue;  // the prompt continues
    accept_token(a, std::span<const float>(logits).subspan(r * vocab, vocab));
  }
}

void Scheduler::consume_picks(const std::vector<Planned>& plan, const std::vector<TokenId>& picks) {
  for (std::size_t r = 0; r < plan.size(); ++r) {
    Active& a = *plan[r].active;
    if (!advance(a, plan[r].n)) continue;
    const TokenId pick = picks[r];
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
  const bool stopped = emit_text(a, a.utf8.push(tokenizer_.token_bytes(token)), ev.text);
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

// Appends decoded text, cuts it at a stop string, and puts in `out` what can be streamed.
// Returns true when a stop string was found.
bool Scheduler::emit_text(Active& a, std::string_view piece, std::string& out) {
  const std::size_t before = a.text.size();
  a.text.append(piece);
  const auto& stops = a.request.stop_strings;
  for (const auto& stop : stops) {
    if (stop.empty()) continue;
    const std::size_t from = before >= stop.size() ? before - stop.size() + 1 : 0;
    if (auto at = a.text.find(stop, from); at != std::string::npos) {
      a.text.resize(at);
      out = a.text.substr(std::min(a.n_emitted, a.text.size()));
      a.n_emitted = a.text.size();
      return true;
    }
  }
  const std::size_t safe = a.text.size() - held_for_stop(a.text, stops);
  if (safe > a.n_emitted) {
    out = a.text.substr(a.n_emitted, safe - a.n_emitted);
    a.n_emitted = safe;
  }
  return false;
}

void Scheduler::finish(Active& a, FinishReason reason, std::string error) {
  if (reason != FinishReason::StopString) a.text += a.utf8.flush();
  if (a.text.size() > a.n_emitted && a.callbacks.on_token) {
    TokenEvent tail;  // token -1: text held back (stop-string prefix, partial UTF-8) released
    tail.request = a.id;
    tail.text = a.text.substr(a.n_emitted);
    a.callbacks.on_token(tail);
  }
  a.n_emitted = a.text.size();
  if (a.in_kv) keep_or_free(a, reason);
  a.in_kv = false;
  a.finished = reason;
  if (a.callbacks.on_finish) {
    RequestResult r;
    r.request = a.id;
    r.reason = reason;
    r.error = std::move(error);
    r.generated.assign(a.tokens.begin() + a.n_prompt, a.tokens.end());
    r.text = a.text;
    r.prompt_tokens = a.n_prompt;
    r.recomputed_tokens = a.recomputed;
    r.reused_tokens = a.reused;
    a.callbacks.on_finish(r);
  }
}

}  // namespace kvscope
