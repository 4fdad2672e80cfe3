// EngineThread: an EngineHost that owns an Engine on a std::thread of its own (the CLI's
// serve). Loop: run the queued tasks, then one Engine::step() while there is work; sleep on
// a condition variable when idle. A step that throws leaves the scheduler's state unknown:
// the thread stops (alive() false, error() says why) rather than run on it.
#pragma once

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "serve/engine_host.h"

namespace kvscope::serve {

class EngineThread : public EngineHost {
 public:
  explicit EngineThread(std::unique_ptr<Engine> engine);
  ~EngineThread() override;  // stops and joins, then drops the engine

  bool post(EngineTask task) override;
  bool alive() const override;
  // Asks the thread to stop after the task or step in progress (any thread; waiters see
  // alive() false at once). join() then waits for it: after join() no callback runs.
  void stop();
  void join();
  std::string error() const;

 private:
  void loop();

  std::unique_ptr<Engine> engine_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<EngineTask> tasks_;
  bool stopping_ = false;
  bool dead_ = false;
  std::string error_;
  std::thread thread_;
};

}  // namespace kvscope::serve
