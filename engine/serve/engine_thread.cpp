#include "serve/engine_thread.h"

#include <exception>
#include <utility>

#include "run/engine.h"

namespace kvscope::serve {

EngineThread::EngineThread(std::unique_ptr<Engine> engine)
    : engine_(std::move(engine)), thread_([this] { loop(); }) {}

EngineThread::~EngineThread() {
  stop();
  join();
}

void EngineThread::join() {
  if (thread_.joinable()) thread_.join();
}

bool EngineThread::post(EngineTask task) {
  {
    std::lock_guard lock(mutex_);
    if (stopping_ || dead_) return false;
    tasks_.push_back(std::move(task));
  }
  wake_.notify_one();
  return true;
}

bool EngineThread::alive() const {
  std::lock_guard lock(mutex_);
  return !dead_ && !stopping_;
}

void EngineThread::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
}

std::string EngineThread::error() const {
  std::lock_guard lock(mutex_);
  return error_;
}

void EngineThread::loop() {
  std::deque<EngineTask> batch;
  for (;;) {
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || !tasks_.empty() || !engine_->idle(); });
      if (stopping_) break;
      batch.swap(tasks_);
    }
    // Tasks answer their own errors (RequestStream, promises); one that throws anyway has
    // not touched the scheduler's state mid-step, so the others go on.
    for (EngineTask& task : batch) {
      try {
        task(*engine_);
      } catch (const std::exception&) {
      }
    }
    batch.clear();
    try {
      if (!engine_->idle()) engine_->step();
    } catch (const std::exception& e) {
      std::lock_guard lock(mutex_);
      error_ = e.what();
      dead_ = true;
      break;
    }
  }
  std::lock_guard lock(mutex_);
  dead_ = true;
  tasks_.clear();
}

}  // namespace kvscope::serve
