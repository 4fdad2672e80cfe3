// ClosableHost: the engine host one run of the app's API server sees. It forwards to the
// engine worker (which outlives servers: it serves the chats too) and can be closed when the
// server stops: alive() turns false at once, so every HTTP thread waiting on a request gives
// up (503, or the stream ends) instead of holding the server's stop until replies finish.
// One lives as long as the engine's steps can run (the engine's callbacks of API requests
// hold a reference to it), and serves each run of the server in turn.
// Posts still go through after closing: they are the cancels and cache releases of those
// requests, and the engine must run them to free their sequences.
#pragma once

#include <atomic>
#include <utility>

#include "serve/engine_host.h"

namespace kvscope::ui {

class ClosableHost : public serve::EngineHost {
 public:
  explicit ClosableHost(serve::EngineHost& engine) : engine_(engine) {}

  bool post(serve::EngineTask task) override { return engine_.post(std::move(task)); }
  bool alive() const override { return open_ && engine_.alive(); }
  void open() { open_ = true; }
  void close() { open_ = false; }

 private:
  serve::EngineHost& engine_;
  std::atomic<bool> open_{true};
};

}  // namespace kvscope::ui
