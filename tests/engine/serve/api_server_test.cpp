// ApiServer's lifecycle on loopback, with no engine behind it (an EngineHost that takes no
// tasks): a stop requested before run() makes run() return at once, and a stop from
// another thread ends a server that is listening.
#include "serve/api_server.h"

#include <chrono>
#include <future>
#include <thread>

#include <gtest/gtest.h>

namespace kvscope::serve {
namespace {

class NoEngine : public EngineHost {
 public:
  bool post(EngineTask) override { return false; }
  bool alive() const override { return false; }
};

ServerOptions loopback_any_port() {
  ServerOptions o;
  o.port = 0;
  o.http_threads = 2;
  return o;
}

// run() on a thread of its own; true when it returned within `limit`. A run still going
// is stopped again (it listens by then) so the test ends either way.
bool returns_within(ApiServer& server, std::chrono::seconds limit) {
  auto run = std::async(std::launch::async, [&server] { server.run(); });
  const bool returned = run.wait_for(limit) == std::future_status::ready;
  while (run.wait_for(std::chrono::milliseconds(50)) != std::future_status::ready) server.stop();
  return returned;
}

TEST(ApiServer, AStopBeforeRunMakesRunReturnAtOnce) {
  NoEngine host;
  ApiServer server(host, {}, loopback_any_port());
  ASSERT_GT(server.bind(), 0);
  server.stop();
  EXPECT_TRUE(returns_within(server, std::chrono::seconds(5)));
}

TEST(ApiServer, AStopFromAnotherThreadEndsAListeningServer) {
  NoEngine host;
  ApiServer server(host, {}, loopback_any_port());
  ASSERT_GT(server.bind(), 0);
  auto run = std::async(std::launch::async, [&server] { server.run(); });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // listening by now
  server.stop();
  EXPECT_EQ(run.wait_for(std::chrono::seconds(5)), std::future_status::ready);
  while (run.wait_for(std::chrono::milliseconds(50)) != std::future_status::ready) server.stop();
}

}  // namespace
}  // namespace kvscope::serve
