#include "serve/engine_thread.h"

#include <memory>
#include <thread>

#include <gtest/gtest.h>

#include "run/engine.h"
#include "serve/engine_call.h"
#include "support/test_data.h"

namespace kvscope::serve {
namespace {

std::unique_ptr<Engine> stories(const std::string& path) {
  EngineOptions o;
  o.backend = BackendChoice::Cpu;
  o.n_threads = 1;
  o.context_length = 128;
  return std::make_unique<Engine>(path, o);
}

TEST(EngineThread, RunsTasksOnItsOwnThreadAndStepsUntilIdle) {
  KVSCOPE_REQUIRE_SHARED(path, "models/stories260K.gguf");
  EngineThread host(stories(path));
  const auto caller = std::this_thread::get_id();
  EXPECT_NE(call_on_engine(host, [](Engine&) { return std::this_thread::get_id(); }), caller);
  // A request submitted by a task runs to its end without anyone calling step().
  auto done = std::make_shared<std::promise<RequestResult>>();
  host.post([done](Engine& e) {
    GenerationRequest r;
    r.prompt = e.tokenize("Once upon a time", true);
    r.max_tokens = 8;
    r.sampling.temperature = 0.0f;
    e.submit(std::move(r), {{}, [done](const RequestResult& res) { done->set_value(res); }});
  });
  auto result = done->get_future();
  ASSERT_EQ(result.wait_for(std::chrono::seconds(120)), std::future_status::ready);
  EXPECT_EQ(result.get().generated.size(), 8u);
  EXPECT_TRUE(call_on_engine(host, [](Engine& e) { return e.idle(); }));
}

TEST(EngineThread, AStoppedEngineAnswers503InsteadOfHanging) {
  KVSCOPE_REQUIRE_SHARED(path, "models/stories260K.gguf");
  EngineThread host(stories(path));
  host.stop();
  host.join();
  EXPECT_FALSE(host.alive());
  EXPECT_FALSE(host.post([](Engine&) {}));
  try {
    call_on_engine(host, [](Engine&) { return 1; });
    FAIL() << "answered without an engine";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.status(), 503);
  }
}

TEST(EngineThread, ATaskThatThrowsHandsItsErrorToTheCaller) {
  KVSCOPE_REQUIRE_SHARED(path, "models/stories260K.gguf");
  EngineThread host(stories(path));
  EXPECT_THROW(call_on_engine(host, [](Engine&) -> int { throw bad_request("no"); }), ApiError);
  EXPECT_TRUE(host.alive());  // and the engine goes on
  EXPECT_EQ(call_on_engine(host, [](Engine& e) { return e.context_length(); }), 128);
}

}  // namespace
}  // namespace kvscope::serve
