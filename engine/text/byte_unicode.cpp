#include "text/byte_unicode.h"

#include <array>

namespace kvscope {
namespace {

// Bytes GPT-2 keeps as their own Latin-1 character: '!'..'~', '¡'..'¬', '®'..'ÿ'.
bool is_kept_byte(int b) {
  return (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
}

std::string utf8_of(std::uint32_t cp) {
  std::string s;
  if (cp < 0x80) {
    s.push_back(static_cast<char>(cp));
  } else {  // the alphabet stays below U+0800: two bytes suffice
    s.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    s.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
  return s;
}

// The two directions of the mapping, built once. Code points of the alphabet are < 0x144.
struct ByteAlphabet {
  static constexpr std::uint32_t kMaxCodePoint = 0x144;
  std::array<std::string, 256> byte_text;
  std::array<std::int16_t, kMaxCodePoint> code_point_byte;  // -1: not in the alphabet

  ByteAlphabet() {
    code_point_byte.fill(-1);
    std::uint32_t next_extra = 0x100;
    for (int b = 0; b < 256; ++b) {
      const std::uint32_t cp = is_kept_byte(b) ? static_cast<std::uint32_t>(b) : next_extra++;
      byte_text[static_cast<std::size_t>(b)] = utf8_of(cp);
      code_point_byte[cp] = static_cast<std::int16_t>(b);
    }
  }
};

const ByteAlphabet& alphabet() {
  static const ByteAlphabet table;
  return table;
}

// Decodes one UTF-8 character of at most two bytes (all the alphabet needs) at `pos`;
// returns the code point and advances `pos`, or nullopt.
std::optional<std::uint32_t> next_code_point(std::string_view text, std::size_t& pos) {
  const auto b0 = static_cast<std::uint8_t>(text[pos]);
  if (b0 < 0x80) {
    pos += 1;
    return b0;
  }
  if ((b0 & 0xE0) != 0xC0 || pos + 1 >= text.size()) return std::nullopt;
  const auto b1 = static_cast<std::uint8_t>(text[pos + 1]);
  if ((b1 & 0xC0) != 0x80) return std::nullopt;
  const std::uint32_t cp = (static_cast<std::uint32_t>(b0 & 0x1F) << 6) | (b1 & 0x3F);
  if (cp < 0x80) return std::nullopt;  // overlong encoding
  pos += 2;
  return cp;
}

}  // namespace

std::string_view byte_to_unicode(std::uint8_t b) {
  return alphabet().byte_text[b];
}

std::string bytes_to_unicode(std::string_view bytes) {
  const ByteAlphabet& table = alphabet();
  std::string out;
  out.reserve(bytes.size() * 2);
  for (const char c : bytes) out += table.byte_text[static_cast<std::uint8_t>(c)];
  return out;
}

std::optional<std::string> unicode_to_bytes(std::string_view text) {
  const ByteAlphabet& table = alphabet();
  std::string out;
  out.reserve(text.size());
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::optional<std::uint32_t> cp = next_code_point(text, pos);
    if (!cp || *cp >= ByteAlphabet::kMaxCodePoint || table.code_point_byte[*cp] < 0) {
      return std::nullopt;
    }
    out.push_back(static_cast<char>(table.code_point_byte[*cp]));
  }
  return out;
}

}  // namespace kvscope
