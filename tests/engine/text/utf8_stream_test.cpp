#include "text/utf8_stream.h"

#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace kvscope {
namespace {

const std::string kFffd(kReplacementChar);

// 1-, 2-, 3- and 4-byte characters, and an emoji ZWJ sequence.
const std::string kMixed =
    "a\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80\xE4\xB8\xAD "
    "\xF0\x9F\x91\xA8\xE2\x80\x8D\xF0\x9F\x91\xA9\xE2\x80\x8D\xF0\x9F\x91\xA7";

std::string decode_all(std::string_view bytes) {
  Utf8StreamDecoder decoder;
  std::string out = decoder.push(bytes);
  return out + decoder.flush();
}

TEST(Utf8StreamDecoderTest, PassesCompleteTextThroughUnchanged) {
  Utf8StreamDecoder decoder;
  EXPECT_EQ(decoder.push(kMixed), kMixed);
  EXPECT_EQ(decoder.pending(), 0u);
  EXPECT_EQ(decoder.flush(), "");
}

TEST(Utf8StreamDecoderTest, SplitAtEveryByteBoundaryGivesTheSameText) {
  for (std::size_t cut = 0; cut <= kMixed.size(); ++cut) {
    Utf8StreamDecoder decoder;
    std::string out = decoder.push(std::string_view(kMixed).substr(0, cut));
    // What came out so far is whole characters: a prefix of the text, valid UTF-8.
    EXPECT_EQ(kMixed.compare(0, out.size(), out), 0) << "cut " << cut;
    EXPECT_FALSE(find_invalid_utf8(out).has_value()) << "cut " << cut;
    out += decoder.push(std::string_view(kMixed).substr(cut));
    out += decoder.flush();
    EXPECT_EQ(out, kMixed) << "cut " << cut;
  }
}

TEST(Utf8StreamDecoderTest, ByteByByteEmitsEachCharacterWhenItsLastByteArrives) {
  Utf8StreamDecoder decoder;
  // "€" is E2 82 AC: nothing until the third byte.
  EXPECT_EQ(decoder.push("\xE2"), "");
  EXPECT_EQ(decoder.pending(), 1u);
  EXPECT_EQ(decoder.push("\x82"), "");
  EXPECT_EQ(decoder.pending(), 2u);
  EXPECT_EQ(decoder.push("\xAC"), "\xE2\x82\xAC");
  EXPECT_EQ(decoder.pending(), 0u);
  // A token that ends one character and starts the next.
  EXPECT_EQ(decoder.push("\xF0\x9F"), "");
  EXPECT_EQ(decoder.push("\x98\x80\xC3"), "\xF0\x9F\x98\x80");
  EXPECT_EQ(decoder.push("\xA9!"), "\xC3\xA9!");
}

TEST(Utf8StreamDecoderTest, InvalidBytesBecomeReplacementCharactersImmediately) {
  Utf8StreamDecoder decoder;
  EXPECT_EQ(decoder.push("\x80"), kFffd);  // continuation byte without a lead
  EXPECT_EQ(decoder.push("\xFF"), kFffd);
  EXPECT_EQ(decoder.push("\xF5"), kFffd);  // would be above U+10FFFF
  EXPECT_EQ(decoder.pending(), 0u);
}

// Expected outputs are Python's bytes.decode("utf-8", errors="replace"): one U+FFFD per
// maximal invalid subpart.
TEST(Utf8StreamDecoderTest, RejectsOverlongSurrogateAndOutOfRangeSequences) {
  EXPECT_EQ(decode_all("\xC0\xAF"), kFffd + kFffd);                          // overlong '/'
  EXPECT_EQ(decode_all("\xE0\x80\xAF"), kFffd + kFffd + kFffd);              // overlong 3-byte
  EXPECT_EQ(decode_all("\xF0\x80\x80\xAF"), kFffd + kFffd + kFffd + kFffd);  // overlong 4
  EXPECT_EQ(decode_all("\xED\xA0\x80"), kFffd + kFffd + kFffd);              // surrogate D800
  EXPECT_EQ(decode_all("\xF4\x90\x80\x80"), kFffd + kFffd + kFffd + kFffd);  // U+110000
  // The largest valid values on either side of those limits still decode.
  EXPECT_EQ(decode_all("\xED\x9F\xBF"), "\xED\x9F\xBF");          // U+D7FF
  EXPECT_EQ(decode_all("\xF4\x8F\xBF\xBF"), "\xF4\x8F\xBF\xBF");  // U+10FFFF
  EXPECT_EQ(decode_all("\xE0\xA0\x80"), "\xE0\xA0\x80");          // U+0800
}

TEST(Utf8StreamDecoderTest, BrokenSequenceDoesNotSwallowTheByteThatBrokeIt) {
  EXPECT_EQ(decode_all("\xE2\x82"
                       "A"),
            kFffd + "A");
  EXPECT_EQ(decode_all("\xE2\x82\xE2\x82\xAC"), kFffd + "\xE2\x82\xAC");
  EXPECT_EQ(decode_all("\x80\x80"
                       "a"),
            kFffd + kFffd + "a");
  EXPECT_EQ(decode_all("\xF0\x9F\x98\x80\x80"), "\xF0\x9F\x98\x80" + kFffd);
  // The broken sequence is reported in the same push, never held back.
  Utf8StreamDecoder decoder;
  EXPECT_EQ(decoder.push("\xE2\x82"), "");
  EXPECT_EQ(decoder.push("A"), kFffd + "A");
}

TEST(Utf8StreamDecoderTest, FlushTurnsAHeldPartialIntoOneReplacementCharacter) {
  Utf8StreamDecoder decoder;
  EXPECT_EQ(decoder.push("ok\xF0\x9F\x98"), "ok");
  EXPECT_EQ(decoder.pending(), 3u);
  EXPECT_EQ(decoder.flush(), kFffd);
  EXPECT_EQ(decoder.pending(), 0u);
  EXPECT_EQ(decoder.flush(), "");
  // The decoder starts afresh after a flush.
  EXPECT_EQ(decoder.push("\xC3\xA9"), "\xC3\xA9");
}

TEST(Utf8StreamDecoderTest, OutputDoesNotDependOnHowTheBytesAreChunked) {
  std::mt19937 rng(1234);
  for (int trial = 0; trial < 300; ++trial) {
    // Random bytes biased towards UTF-8 lead and continuation bytes.
    std::string bytes;
    const int length = static_cast<int>(rng() % 24);
    for (int i = 0; i < length; ++i) {
      const std::uint32_t r = rng();
      const int pick = static_cast<int>(r % 4);
      const auto byte = pick == 0   ? 0x20 + (r >> 8) % 0x5F
                        : pick == 1 ? 0x80 + (r >> 8) % 0x40
                                    : 0xC0 + (r >> 8) % 0x40;
      bytes += static_cast<char>(byte);
    }
    const std::string whole = decode_all(bytes);
    EXPECT_FALSE(find_invalid_utf8(whole).has_value());
    Utf8StreamDecoder decoder;
    std::string pieces;
    for (std::size_t pos = 0; pos < bytes.size();) {
      const std::size_t n = 1 + rng() % 3;
      pieces += decoder.push(std::string_view(bytes).substr(pos, n));
      pos += n;
    }
    pieces += decoder.flush();
    EXPECT_EQ(pieces, whole) << "trial " << trial;
  }
}

TEST(Utf8ValidityTest, FindsTheFirstInvalidByte) {
  EXPECT_FALSE(find_invalid_utf8("").has_value());
  EXPECT_FALSE(find_invalid_utf8(kMixed).has_value());
  EXPECT_FALSE(find_invalid_utf8(kFffd).has_value());  // U+FFFD itself is valid
  EXPECT_EQ(find_invalid_utf8("ab\x80"), 2u);
  EXPECT_EQ(find_invalid_utf8("ab\xC3"), 2u);                // truncated at the end
  EXPECT_EQ(find_invalid_utf8("\xC3\xA9\xED\xA0\x80"), 2u);  // surrogate
  EXPECT_EQ(find_invalid_utf8("x\xC1\x81"), 1u);             // overlong
}

}  // namespace
}  // namespace kvscope
