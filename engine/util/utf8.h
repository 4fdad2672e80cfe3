// UTF-8 validation (model file names and headers, tokenizer input) and a printable escape
// of arbitrary bytes so an error message can show what was found. The one validator of
// the engine; the streaming decoder of generated text is text/utf8_stream.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <fmt/format.h>

namespace kvscope {

// Offset of the first byte that does not start a well-formed UTF-8 sequence (a stray
// continuation byte, a truncated sequence, an overlong encoding, a surrogate, anything
// above U+10FFFF), or nullopt when all of `s` is valid.
inline std::optional<std::size_t> find_invalid_utf8(std::string_view s) {
  constexpr std::uint32_t kMinCodePoint[5] = {0, 0, 0x80, 0x800, 0x10000};
  std::size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    std::size_t len = 1;
    std::uint32_t cp = c;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xe0) == 0xc0) {
      len = 2, cp = c & 0x1fu;
    } else if ((c & 0xf0) == 0xe0) {
      len = 3, cp = c & 0x0fu;
    } else if ((c & 0xf8) == 0xf0) {
      len = 4, cp = c & 0x07u;
    } else {
      return i;
    }
    if (s.size() - i < len) return i;
    for (std::size_t k = 1; k < len; ++k) {
      const auto b = static_cast<unsigned char>(s[i + k]);
      if ((b & 0xc0) != 0x80) return i;
      cp = (cp << 6) | (b & 0x3fu);
    }
    if (cp < kMinCodePoint[len] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return i;
    i += len;
  }
  return std::nullopt;
}

inline bool is_valid_utf8(std::string_view s) {
  return !find_invalid_utf8(s).has_value();
}

// Printable ASCII as is, every other byte as \xNN.
inline std::string escape_bytes(std::string_view s) {
  std::string out;
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out.push_back(ch);
    } else {
      out += fmt::format("\\x{:02x}", c);
    }
  }
  return out;
}

// Bytes the file gives as text, for a message a terminal shows: at most `max` bytes (cut
// before a character that would cross it, with the full length noted), well-formed UTF-8 as
// is, and as \xNN every byte that is not (invalid sequences, C0 and C1 controls, DEL, the
// backslash), so a model file can neither fill the screen nor move the cursor or recolour.
inline std::string printable_prefix(std::string_view s, std::size_t max = 64) {
  std::string out;
  std::size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    const std::size_t len = c < 0x80 ? 1 : c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;
    const std::string_view ch = s.substr(i, len);
    const bool whole = len > 1 && ch.size() == len && !find_invalid_utf8(ch).has_value();
    const std::size_t step = whole ? len : 1;
    if (i + step > max) break;
    const bool c1 = whole && c == 0xc2 && static_cast<unsigned char>(ch[1]) < 0xa0;
    if (whole && !c1) {
      out.append(ch);
    } else if (c >= 0x20 && c < 0x7f && c != '\\') {
      out.push_back(static_cast<char>(c));
    } else {
      for (std::size_t k = 0; k < step; ++k) {
        out += fmt::format("\\x{:02x}", static_cast<unsigned char>(s[i + k]));
      }
    }
    i += step;
  }
  if (i < s.size()) out += fmt::format("... ({} bytes)", s.size());
  return out;
}

}  // namespace kvscope
