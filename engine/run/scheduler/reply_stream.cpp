#include "run/scheduler/reply_stream.h"

#include <algorithm>

namespace kvscope {

namespace {

// Bytes at the end of `text` that could still grow into one of `stops`: they are held
// back from the stream until it is clear they are not the start of a stop string.
std::size_t held_for_stop(std::string_view text, const std::vector<std::string>& stops) {
  std::size_t held = 0;
  for (const auto& stop : stops) {
    if (stop.empty()) continue;
    for (std::size_t n = std::min(stop.size() - 1, text.size()); n > held; --n) {
      if (text.substr(text.size() - n) == std::string_view(stop).substr(0, n)) {
        held = n;
        break;
      }
    }
  }
  return held;
}

}  // namespace

bool ReplyStream::push(std::string_view token_bytes, std::string& out) {
  const std::size_t before = text_.size();
  text_.append(utf8_.push(token_bytes));
  for (const auto& stop : stops_) {
    if (stop.empty()) continue;
    // Only a stop string that ends in the new text is new: search from where one could start.
    const std::size_t from = before >= stop.size() ? before - stop.size() + 1 : 0;
    if (auto at = text_.find(stop, from); at != std::string::npos) {
      text_.resize(at);
      out = text_.substr(std::min(n_streamed_, text_.size()));
      n_streamed_ = text_.size();
      return true;
    }
  }
  const std::size_t safe = text_.size() - held_for_stop(text_, stops_);
  if (safe > n_streamed_) {
    out = text_.substr(n_streamed_, safe - n_streamed_);
    n_streamed_ = safe;
  }
  return false;
}

std::string ReplyStream::finish(bool at_stop_string) {
  if (!at_stop_string) text_ += utf8_.flush();
  std::string tail = text_.size() > n_streamed_ ? text_.substr(n_streamed_) : std::string();
  n_streamed_ = text_.size();
  return tail;
}

}  // namespace kvscope
