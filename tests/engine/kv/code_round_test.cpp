// code_clamp and code_round (kv/format/code_round.h) give exactly what the library calls
// they replace give, on every float a K or V code can come from.
#include "kv/format/code_round.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include <gtest/gtest.h>

namespace kvscope {
namespace {

bool same_bits(float a, float b) {
  return std::memcmp(&a, &b, sizeof(float)) == 0;
}

TEST(CodeRound, IsStdRoundOnFloatsUpTo128) {
  std::uint32_t top = 0;
  const float limit = 128.0f;
  std::memcpy(&top, &limit, sizeof(float));
  const auto check = [](float v) {
    for (const float x : {v, -v}) ASSERT_EQ(code_round(x), static_cast<int>(std::round(x))) << x;
  };
  // a stride through the bit patterns of [0, 128], every exponent and many mantissas
  for (std::uint32_t bits = 0; bits <= top; bits += 997) {
    float v = 0.0f;
    std::memcpy(&v, &bits, sizeof(float));
    check(v);
  }
  // and the floats around every integer and half, where rounding decides
  for (int k = 0; k <= 256; ++k) {
    float v = 0.5f * static_cast<float>(k);
    for (int i = 0; i < 4; ++i) v = std::nextafter(v, 0.0f);
    for (int i = 0; i < 9; ++i, v = std::nextafter(v, 200.0f)) check(v);
  }
}

TEST(CodeRound, ClampIsFminOfFmaxNaNIncluded) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  for (const float lo_hi : {7.0f, 15.0f, 127.0f}) {
    for (const float lo : {-lo_hi, 0.0f}) {
      for (const float x : {nan, inf, -inf, 0.0f, -0.0f, 3.5f, -3.5f, lo, lo_hi, 1e30f, -1e30f,
                            lo_hi + 0.5f, lo - 0.5f}) {
        const float want = std::fmin(std::fmax(x, lo), lo_hi);
        EXPECT_TRUE(same_bits(code_clamp(x, lo, lo_hi), want) ||
                    (want == 0.0f && code_clamp(x, lo, lo_hi) == 0.0f))
            << x << " in [" << lo << ", " << lo_hi << "]";
      }
    }
  }
}

}  // namespace
}  // namespace kvscope
