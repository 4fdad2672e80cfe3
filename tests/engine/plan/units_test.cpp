#include "plan/units.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "util/error.h"

namespace kvscope {
namespace {

TEST(Units, ParsesBinaryAndDecimalSizes) {
  EXPECT_EQ(parse_byte_size("8GiB"), 8LL << 30);
  EXPECT_EQ(parse_byte_size("16GB"), 16'000'000'000LL);
  EXPECT_EQ(parse_byte_size("512MiB"), 512LL << 20);
  EXPECT_EQ(parse_byte_size("1.5 GiB"), 3LL << 29);
  EXPECT_EQ(parse_byte_size("8gib"), 8LL << 30);
  EXPECT_EQ(parse_byte_size("300000000"), 300'000'000);
  EXPECT_EQ(parse_byte_size("64KiB"), 65'536);
  EXPECT_EQ(parse_byte_size("2TB"), 2'000'000'000'000LL);
  EXPECT_EQ(parse_byte_size("1TiB"), 1LL << 40);
  EXPECT_EQ(parse_byte_size("100B"), 100);
  EXPECT_EQ(parse_byte_size("1.5G"), 3LL << 29);
  EXPECT_EQ(parse_byte_size("512m"), 512LL << 20);
}

TEST(Units, RejectsMalformedSizesNamingTheOption) {
  for (const char* bad : {"", "GiB", "-1GB", "8XB", "1.2.3GB", "1e3GB", "99999999999TiB"}) {
    try {
      parse_byte_size(bad, "--vram");
      ADD_FAILURE() << "accepted \"" << bad << "\"";
    } catch (const UsageError& e) {
      EXPECT_THAT(e.what(), ::testing::HasSubstr("--vram")) << bad;
    }
  }
}

TEST(Units, GroupsDigitsInThousands) {
  EXPECT_EQ(group_digits(1'073'741'824), "1,073,741,824");
  EXPECT_EQ(group_digits(999), "999");
  EXPECT_EQ(group_digits(1000), "1,000");
  EXPECT_EQ(group_digits(0), "0");
  EXPECT_EQ(group_digits(-1234), "-1,234");
}

TEST(Units, HumanBytesUseBinaryUnitsWithThreeDigits) {
  EXPECT_EQ(human_bytes(1LL << 30), "1.00 GiB");
  EXPECT_EQ(human_bytes(512LL << 20), "512 MiB");
  EXPECT_EQ(human_bytes(300), "300 B");
  EXPECT_EQ(human_bytes(1536), "1.50 KiB");
  EXPECT_EQ(human_bytes(24LL << 30), "24.0 GiB");
  EXPECT_EQ(human_bytes(-(2LL << 30)), "-2.00 GiB");
}

}  // namespace
}  // namespace kvscope
