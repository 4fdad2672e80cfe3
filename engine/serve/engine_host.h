// The contract between the HTTP side and the one thread that owns the Engine (the Engine is
// single-owner: submit/step/snapshot on that thread only; cancel() from anywhere). The HTTP
// threads never touch the engine: they post tasks, which the owning thread runs between two
// steps, and read what the tasks hand back through thread-safe values (RequestStream, a
// promise). The owner keeps stepping while the engine has work.
//
// kvscope-cli serve uses EngineThread (its own thread); the app's engine worker implements
// the same interface on its QThread, so API requests join the chats' batch.
#pragma once

#include <functional>

namespace kvscope {
class Engine;
}

namespace kvscope::serve {

using EngineTask = std::function<void(Engine&)>;

class EngineHost {
 public:
  virtual ~EngineHost() = default;
  // Queues `task` to run on the owning thread before its next step. False (task dropped)
  // when there is no engine any more (stopped, failed, model unloaded).
  virtual bool post(EngineTask task) = 0;
  // False once posted tasks will never run again: waiters stop waiting.
  virtual bool alive() const = 0;
};

}  // namespace kvscope::serve
