// call_on_engine: runs a function on the engine-owning thread (between two steps) and waits
// for its value on the calling HTTP thread. The function's exception comes back as the
// caller's; a gone engine, or one that does not answer in time, is a 503 ApiError.
#pragma once

#include <chrono>
#include <future>
#include <memory>
#include <utility>

#include "serve/api_error.h"
#include "serve/engine_host.h"

namespace kvscope::serve {

template <typename F>
auto call_on_engine(EngineHost& host, F fn,
                    std::chrono::seconds timeout = std::chrono::seconds(300)) {
  using T = decltype(fn(std::declval<Engine&>()));
  auto promise = std::make_shared<std::promise<T>>();
  std::future<T> future = promise->get_future();
  const bool posted = host.post([promise, fn = std::move(fn)](Engine& engine) {
    try {
      promise->set_value(fn(engine));
    } catch (...) {
      promise->set_exception(std::current_exception());
    }
  });
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  // Short waits: a dead engine drops its tasks without answering them.
  while (posted && future.wait_for(std::chrono::milliseconds(200)) != std::future_status::ready) {
    if (!host.alive() || std::chrono::steady_clock::now() > deadline) break;
  }
  if (!posted || future.wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
    throw ApiError(503, "server_error", "the engine is not running (stopped or failed)");
  }
  return future.get();
}

}  // namespace kvscope::serve
