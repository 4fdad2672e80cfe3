// What a caller asks the engine to generate, and what it gets back, token by token.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "run/sampler.h"
#include "text/tokenizer.h"

namespace kvscope {

// Unique in the process (never reused by another engine after a model switch); 0 is none.
using RequestId = std::int64_t;

struct GenerationRequest {
  std::vector<TokenId> prompt;  // token ids, BOS included when wanted
  SamplingParams sampling;
  std::int64_t max_tokens = 256;          // generated tokens at most
  std::vector<std::string> stop_strings;  // generation ends before the first occurrence
  bool stop_at_end_of_generation = true;  // EOS / EOT end the request
  int top_logprobs = 0;  // > 0: report the K most likely tokens (log-softmax) at each step
  // After the request ends, its cached tokens stay in the KV cache as a prefix that later
  // requests starting with the same tokens share (see Scheduler::release_cache).
  bool keep_cache = false;
};

enum class FinishReason {
  None,
  Length,
  EndOfGeneration,
  StopString,
  ContextFull,
  Cancelled,
  Error
};
std::string_view finish_reason_name(FinishReason reason);

struct TokenEvent {
  RequestId request = 0;
  TokenId token = -1;
  std::string text;      // complete UTF-8 characters that this token finished (may be empty)
  float logprob = 0.0f;  // log-softmax of the chosen token (when top_logprobs > 0)
  std::vector<std::pair<TokenId, float>> top;  // [top_logprobs] (id, logprob), best first
};

struct RequestResult {
  RequestId request = 0;
  FinishReason reason = FinishReason::None;
  std::string error;  // the message when reason == Error or ContextFull
  std::vector<TokenId> generated;
  std::string text;  // all generated text (stop string excluded)
  std::int64_t prompt_tokens = 0;
  std::int64_t recomputed_tokens = 0;  // prompt/history tokens re-run after preemption
  std::int64_t reused_tokens = 0;      // prompt tokens taken from a kept prefix, not run
};

// Called on the thread that runs Engine::step(): each token as it is generated, then once
// when the request finishes.
struct RequestCallbacks {
  std::function<void(const TokenEvent&)> on_token;
  std::function<void(const RequestResult&)> on_finish;
};

}  // namespace kvscope
