// The scheduler's record of one live request (private to the scheduler's .cpp files).
#pragma once

#include <string>
#include <vector>

#include "run/request.h"
#include "run/sampler.h"
#include "run/scheduler/reply_stream.h"
#include "run/scheduler/scheduler.h"

namespace kvscope {

// A live request: its tokens (prompt, then generated), how many of them are in the KV
// cache, and the reply streamed so far. The token after the cached ones is the next input; once
// every token is cached except the newest, the sequence is decoding one token per step.
struct Scheduler::Active {
  RequestId id = 0;
  SeqId seq = 0;
  GenerationRequest request;
  RequestCallbacks callbacks;
  std::vector<TokenId> tokens;  // [n_prompt + generated]
  std::int64_t n_prompt = 0;
  std::int64_t n_cached = 0;
  bool in_kv = false;  // the KV manager knows the sequence (possibly preempted)
  Sampler sampler;
  ReplyStream reply;
  std::int64_t recomputed = 0;
  std::int64_t reused = 0;  // prompt tokens shared from a kept prefix
  FinishReason finished = FinishReason::None;

  Active(GenerationRequest r, RequestCallbacks c)
      : request(std::move(r)),
        callbacks(std::move(c)),
        sampler(request.sampling),
        reply(request.stop_strings) {}
  std::int64_t n_generated() const { return static_cast<std::int64_t>(tokens.size()) - n_prompt; }
  std::int64_t n_pending() const { return static_cast<std::int64_t>(tokens.size()) - n_cached; }
};

}  // namespace kvscope
