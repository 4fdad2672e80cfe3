// The text of one reply as it streams: token bytes in, complete UTF-8 characters out, cut
// before the first stop string. Bytes that could still grow into a stop string, and the
// first bytes of a character split across tokens, are held back until it is clear what
// they are, so a client never sees half a character or the start of a stop string.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "text/utf8_stream.h"

namespace kvscope {

class ReplyStream {
 public:
  explicit ReplyStream(std::vector<std::string> stop_strings = {})
      : stops_(std::move(stop_strings)) {}

  // Appends one token's bytes and puts in `out` the text that can be streamed now (may be
  // empty). Returns true when a stop string was found: the text ends before it.
  bool push(std::string_view token_bytes, std::string& out);
  // Ends the reply and returns what was held back: bytes that turned out not to start a
  // stop string, and a partial character as U+FFFD (dropped when the reply ended at a stop
  // string, whose bytes it belongs to).
  std::string finish(bool at_stop_string);

  // Everything generated so far (the stop string cut off), streamed or held back.
  const std::string& text() const { return text_; }

 private:
  std::vector<std::string> stops_;
  Utf8StreamDecoder utf8_;
  std::string text_;
  std::size_t n_streamed_ = 0;  // bytes of text_ already handed out
};

}  // namespace kvscope
