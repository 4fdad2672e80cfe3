// printable_prefix: the one way text read from a model file enters a message a terminal shows.
#include <string>

#include <gtest/gtest.h>

#include "util/utf8.h"

namespace kvscope {
namespace {

TEST(PrintablePrefix, KeepsUtf8AndEscapesControlBytesAndInvalidOnes) {
  EXPECT_EQ(printable_prefix("▁hello 你好"), "▁hello 你好");
  EXPECT_EQ(printable_prefix("\x1b[2Jred\x07"), "\\x1b[2Jred\\x07");
  EXPECT_EQ(printable_prefix("a\xff\xc3(b"), "a\\xff\\xc3(b");  // a stray byte, a cut sequence
  EXPECT_EQ(printable_prefix("\xc2\x9b"
                             "31m"),
            "\\xc2\\x9b31m");  // C1 CSI, UTF-8 encoded
  EXPECT_EQ(printable_prefix("back\\slash\x7f"), "back\\x5cslash\\x7f");
}

TEST(PrintablePrefix, LongTextIsCutAtACharacterWithItsLengthNoted) {
  EXPECT_EQ(printable_prefix(std::string(100000, 'a'), 4), "aaaa... (100000 bytes)");
  // "é" is two bytes: it would cross the limit of 3, so it is left out whole
  EXPECT_EQ(printable_prefix("aaé", 3), "aa... (4 bytes)");
  EXPECT_EQ(printable_prefix("abc", 3), "abc");
  EXPECT_EQ(printable_prefix(""), "");
}

}  // namespace
}  // namespace kvscope
