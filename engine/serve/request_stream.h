// RequestStream: what one API request's engine callbacks hand to the HTTP thread serving it.
// The engine thread pushes (never blocks: a slow client cannot hold up a step); the HTTP
// thread waits with a timeout, so it can notice a dead engine or a gone client. Text comes
// as the engine streamed it (complete UTF-8), in order, then exactly one end: finished
// (the engine's result) or rejected (an ApiError before the request ran).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "run/request.h"
#include "serve/api_error.h"

namespace kvscope::serve {

// One generated token as the client sees it: spelled on the engine thread (the tokenizer is
// the engine's), with its log-probability and the best alternatives when asked for.
struct StreamToken {
  TokenId id = -1;    // -1: text held back (a possible stop string) released at the end
  std::string text;   // complete UTF-8 characters this token finished (may be empty)
  std::string piece;  // the token's own bytes (logprobs' "token"; may be half a character)
  float logprob = 0.0f;
  std::vector<std::pair<std::string, float>> top;  // [top_logprobs] best first
};

struct StreamUpdate {
  std::vector<StreamToken> tokens;      // new since the last take, in order
  std::optional<std::int64_t> started;  // prompt tokens, once the engine accepted it
  std::optional<RequestResult> finished;
  std::optional<ApiError> rejected;
  bool ended() const { return finished || rejected; }
};

class RequestStream {
 public:
  // Engine thread.
  void start(RequestId id, std::int64_t prompt_tokens);
  void token(StreamToken token);
  void finish(const RequestResult& result);
  void reject(const ApiError& error);

  // Engine side, from the callbacks' destruction: a request the engine let go of without an
  // end (the engine was dropped, or replaced by another model) ends as a 503.
  void abandon();

  // HTTP thread: everything new, waiting up to `timeout` when nothing is.
  StreamUpdate take(std::chrono::milliseconds timeout);
  // The engine's id for the request (0 until started).
  RequestId request() const;

 private:
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  RequestId request_ = 0;
  bool ended_ = false;  // finish or reject was pushed
  StreamUpdate pending_;
};

}  // namespace kvscope::serve
