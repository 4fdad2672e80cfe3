// A prompt is tokenized on its HTTP thread with the tokenizer the server saw last; when the
// engine behind the host is replaced before the request reaches it (the app loading another
// model), the request is tokenized again with the new one and answered, not refused. On the
// real stories260K, through a loopback ApiServer.
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>

#include <httplib.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "run/engine.h"
#include "serve/api_server.h"
#include "support/generation_fixtures.h"
#include "support/test_data.h"

namespace kvscope::serve {
namespace {

// Runs tasks and steps on its own thread, like EngineThread, on engine `a` for the first task
// and on engine `b` from then on.
class SwitchingHost : public EngineHost {
 public:
  SwitchingHost(std::unique_ptr<Engine> a, std::unique_ptr<Engine> b)
      : a_(std::move(a)), b_(std::move(b)), current_(a_.get()), thread_([this] { loop(); }) {}
  ~SwitchingHost() override {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_one();
    thread_.join();
  }
  bool post(EngineTask task) override {
    {
      std::lock_guard lock(mutex_);
      if (stopping_) return false;
      tasks_.push_back(std::move(task));
    }
    wake_.notify_one();
    return true;
  }
  bool alive() const override {
    std::lock_guard lock(mutex_);
    return !stopping_;
  }
  int tasks_run() const {
    std::lock_guard lock(mutex_);
    return ran_;
  }

 private:
  void loop() {
    for (;;) {
      std::deque<EngineTask> batch;
      {
        std::unique_lock lock(mutex_);
        wake_.wait(lock, [&] { return stopping_ || !tasks_.empty() || !current_->idle(); });
        if (stopping_) return;
        batch.swap(tasks_);
      }
      for (EngineTask& task : batch) {
        task(*current_);
        std::lock_guard lock(mutex_);
        if (++ran_ == 1) current_ = b_.get();  // the model changes after the first task
      }
      if (!current_->idle()) current_->step();
    }
  }

  std::unique_ptr<Engine> a_, b_;
  Engine* current_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<EngineTask> tasks_;
  int ran_ = 0;
  bool stopping_ = false;
  std::thread thread_;
};

TEST(ApiServerModelSwitch, ARequestTokenizedWithTheOldModelIsTokenizedAgainAndAnswered) {
  KVSCOPE_REQUIRE_SHARED(model, "models/stories260K.gguf");
  SwitchingHost host(std::make_unique<Engine>(model, test::small_options()),
                     std::make_unique<Engine>(model, test::small_options()));
  ServerOptions options;
  options.port = 0;
  options.http_threads = 4;
  ApiServer server(host, {"stories260K", test::kContext}, options);
  const int port = server.bind();
  std::thread run([&server] { server.run(); });

  httplib::Client client("127.0.0.1", port);
  client.set_read_timeout(120, 0);
  const auto res = client.Post(
      "/v1/completions", R"({"prompt": "Once upon a time", "max_tokens": 4, "temperature": 0})",
      "application/json");
  server.stop();
  run.join();
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200) << res->body;
  const auto body = nlohmann::json::parse(res->body);
  EXPECT_EQ(body["usage"]["completion_tokens"], 4);
  // Fetch (engine a), refused submit (b), fetch again, submit: four tasks at least.
  EXPECT_GE(host.tasks_run(), 4);
}

}  // namespace
}  // namespace kvscope::serve
