// UTF-8 for streamed generation. A token's bytes may end in the middle of a character
// (byte-fallback tokens, BPE byte pieces), so the stream decoder holds a partial sequence
// until it completes and never emits half a character. Invalid bytes become U+FFFD at
// once, one per maximal invalid subpart (as the Unicode standard and WHATWG recommend),
// so a model that produces garbage never stalls the stream.
#pragma once

#include "util/utf8.h"  // find_invalid_utf8

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace kvscope {

// U+FFFD REPLACEMENT CHARACTER, UTF-8 encoded.
inline constexpr std::string_view kReplacementChar = "\xEF\xBF\xBD";

class Utf8StreamDecoder {
 public:
  // Appends `bytes` and returns the complete, valid UTF-8 characters now available.
  // A trailing partial sequence is held for the next push.
  std::string push(std::string_view bytes);
  // Ends the stream: a held partial sequence becomes U+FFFD.
  std::string flush();
  // Bytes of an incomplete character currently held (0..3).
  std::size_t pending() const { return held_len_; }

 private:
  void accept(std::uint8_t byte, std::string& out);
  void start(std::uint8_t byte, std::string& out);

  char held_[4] = {};
  std::size_t held_len_ = 0;
  std::size_t needed_ = 0;  // continuation bytes still expected
  // Allowed range of the next continuation byte; narrower than 80..BF right after E0, ED,
  // F0, F4 so overlong forms, surrogates and code points above U+10FFFF are rejected.
  std::uint8_t lower_ = 0x80;
  std::uint8_t upper_ = 0xBF;
};

}  // namespace kvscope
