// ReplyStream: the text a client sees as tokens arrive: whole characters only, cut before a
// stop string, never the start of one that might still complete.
#include "run/scheduler/reply_stream.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace kvscope {
namespace {

// What push hands out for each piece, in order.
std::vector<std::string> pushes(ReplyStream& reply, const std::vector<std::string>& pieces,
                                bool* stopped = nullptr) {
  std::vector<std::string> out;
  for (const auto& piece : pieces) {
    std::string now;
    const bool stop = reply.push(piece, now);
    out.push_back(now);
    if (stop) {
      if (stopped != nullptr) *stopped = true;
      break;
    }
  }
  return out;
}

TEST(ReplyStream, HoldsACharacterSplitAcrossTokensUntilItIsWhole) {
  ReplyStream reply;
  // "é" is C3 A9: its first byte arrives with one token, its second with the next.
  EXPECT_EQ(pushes(reply, {"caf\xC3", "\xA9!"}), (std::vector<std::string>{"caf", "\xC3\xA9!"}));
  EXPECT_EQ(reply.finish(false), "");
  EXPECT_EQ(reply.text(), "caf\xC3\xA9!");
}

TEST(ReplyStream, ACharacterLeftHalfAtTheEndBecomesTheReplacementCharacter) {
  ReplyStream reply;
  EXPECT_EQ(pushes(reply, {"ok\xE2\x82"}), (std::vector<std::string>{"ok"}));
  EXPECT_EQ(reply.finish(false), kReplacementChar);
  EXPECT_EQ(reply.text(), std::string("ok") + std::string(kReplacementChar));
}

TEST(ReplyStream, CutsBeforeAStopStringSplitAcrossTokens) {
  ReplyStream reply({"<|end|>"});
  bool stopped = false;
  const auto out = pushes(reply, {"Hi", " <|e", "nd|> more"}, &stopped);
  EXPECT_TRUE(stopped);
  // "<|e" could start the stop string: held back, and never streamed once it completes.
  EXPECT_EQ(out, (std::vector<std::string>{"Hi", " ", ""}));
  EXPECT_EQ(reply.text(), "Hi ");
  EXPECT_EQ(reply.finish(true), "");
}

TEST(ReplyStream, ReleasesHeldBytesThatTurnOutNotToBeAStopString) {
  ReplyStream reply({"STOP", "\n\n"});
  EXPECT_EQ(pushes(reply, {"a ST", "ill\n"}), (std::vector<std::string>{"a ", "STill"}));
  // A trailing "\n" might still become "\n\n": only the end of the reply releases it.
  EXPECT_EQ(reply.finish(false), "\n");
  EXPECT_EQ(reply.text(), "a STill\n");
}

TEST(ReplyStream, ACopyGoesOnFromTheSameHeldBytesIndependently) {
  ReplyStream parent({"xyz"});
  EXPECT_EQ(pushes(parent, {"ab", "xy"}), (std::vector<std::string>{"ab", ""}));  // "xy" held
  ReplyStream child = parent;  // a forked request's reply
  bool stopped = false;
  EXPECT_EQ(pushes(child, {"z"}, &stopped), (std::vector<std::string>{""}));
  EXPECT_TRUE(stopped);
  EXPECT_EQ(child.text(), "ab");
  EXPECT_EQ(pushes(parent, {"q"}), (std::vector<std::string>{"xyq"}));
  EXPECT_EQ(parent.text(), "abxyq");
}

}  // namespace
}  // namespace kvscope
