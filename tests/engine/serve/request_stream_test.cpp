#include "serve/request_stream.h"

#include <chrono>
#include <thread>

#include <gtest/gtest.h>

namespace kvscope::serve {
namespace {

using std::chrono::milliseconds;

StreamToken token(TokenId id, const char* text) {
  StreamToken t;
  t.id = id;
  t.text = text;
  return t;
}

TEST(RequestStream, HandsOverTokensInOrderThenTheEnd) {
  RequestStream s;
  s.start(7, 5);
  s.token(token(1, "a"));
  s.token(token(2, "b"));
  StreamUpdate u = s.take(milliseconds(0));
  EXPECT_EQ(s.request(), 7);
  ASSERT_TRUE(u.started);
  EXPECT_EQ(*u.started, 5);
  ASSERT_EQ(u.tokens.size(), 2u);
  EXPECT_EQ(u.tokens[0].text, "a");
  EXPECT_EQ(u.tokens[1].text, "b");
  EXPECT_FALSE(u.ended());
  RequestResult r;
  r.reason = FinishReason::Length;
  s.finish(r);
  u = s.take(milliseconds(0));
  EXPECT_FALSE(u.started);  // each thing once
  ASSERT_TRUE(u.finished);
  EXPECT_EQ(u.finished->reason, FinishReason::Length);
}

TEST(RequestStream, TakeWaitsForTheEngineThread) {
  RequestStream s;
  EXPECT_FALSE(s.take(milliseconds(1)).ended());  // nothing yet: returns after the timeout
  std::thread engine([&] {
    std::this_thread::sleep_for(milliseconds(20));
    s.token(token(3, "c"));
  });
  StreamUpdate u;
  for (int i = 0; i < 100 && u.tokens.empty(); ++i) u = s.take(milliseconds(100));
  engine.join();
  ASSERT_EQ(u.tokens.size(), 1u);
  EXPECT_EQ(u.tokens[0].id, 3);
}

TEST(RequestStream, ARequestTheEngineLetsGoOfEndsAs503) {
  RequestStream s;
  s.abandon();  // never started: its rejection (pushed by whoever refused it) answers it
  EXPECT_FALSE(s.take(milliseconds(0)).ended());
  s.start(1, 3);
  s.abandon();
  const StreamUpdate u = s.take(milliseconds(0));
  ASSERT_TRUE(u.rejected);
  EXPECT_EQ(u.rejected->status(), 503);
}

TEST(RequestStream, AFinishedRequestIsNotAbandoned) {
  RequestStream s;
  s.start(1, 3);
  s.finish(RequestResult{});
  s.abandon();
  const StreamUpdate u = s.take(milliseconds(0));
  EXPECT_TRUE(u.finished);
  EXPECT_FALSE(u.rejected);
}

}  // namespace
}  // namespace kvscope::serve
