// GPT-2's reversible mapping between bytes and printable Unicode characters. Byte-level BPE
// vocabs (GPT-2, Llama 3, Qwen2, SmolLM2) store every token as text in this alphabet, so a
// space is "Ġ" (U+0120) and a newline "Ċ" (U+010A). Printable Latin-1 bytes map to
// themselves; the other 68 bytes map, in order, to U+0100..U+0143.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace kvscope {

// The UTF-8 encoding of the character that stands for byte `b`.
std::string_view byte_to_unicode(std::uint8_t b);

// Every byte of `bytes` (valid UTF-8 or not) replaced by its character.
std::string bytes_to_unicode(std::string_view bytes);

// The bytes a text in the byte alphabet stands for; nullopt when `text` is not valid UTF-8
// or holds a character outside the alphabet.
std::optional<std::string> unicode_to_bytes(std::string_view text);

}  // namespace kvscope
