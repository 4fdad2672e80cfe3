#include "serve/request_stream.h"

#include <utility>

namespace kvscope::serve {

void RequestStream::start(RequestId id, std::int64_t prompt_tokens) {
  {
    std::lock_guard lock(mutex_);
    request_ = id;
    pending_.started = prompt_tokens;
  }
  changed_.notify_all();
}

void RequestStream::token(StreamToken token) {
  {
    std::lock_guard lock(mutex_);
    pending_.tokens.push_back(std::move(token));
  }
  changed_.notify_all();
}

void RequestStream::finish(const RequestResult& result) {
  {
    std::lock_guard lock(mutex_);
    pending_.finished = result;
    ended_ = true;
  }
  changed_.notify_all();
}

void RequestStream::reject(const ApiError& error) {
  {
    std::lock_guard lock(mutex_);
    pending_.rejected = error;
    ended_ = true;
  }
  changed_.notify_all();
}

void RequestStream::abandon() {
  {
    std::lock_guard lock(mutex_);
    if (ended_ || request_ == 0) return;  // never started: its rejection answers it
    pending_.rejected = ApiError(503, "server_error",
                                 "the engine let go of the request (the "
                                 "model was unloaded or the engine stopped)");
    ended_ = true;
  }
  changed_.notify_all();
}

StreamUpdate RequestStream::take(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  changed_.wait_for(lock, timeout, [&] {
    return !pending_.tokens.empty() || pending_.started || pending_.ended();
  });
  return std::exchange(pending_, StreamUpdate{});
}

RequestId RequestStream::request() const {
  std::lock_guard lock(mutex_);
  return request_;
}

}  // namespace kvscope::serve
