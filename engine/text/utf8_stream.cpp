#include "text/utf8_stream.h"

namespace kvscope {

namespace {

// What a lead byte promises: how many continuation bytes follow and the range of the first
// one (Unicode Table 3-7, "Well-Formed UTF-8 Byte Sequences"). The narrow ranges after
// E0, ED, F0 and F4 reject overlong forms, UTF-16 surrogates and code points > U+10FFFF.
struct LeadByte {
  bool valid = false;
  std::size_t continuation = 0;
  std::uint8_t lower = 0x80;
  std::uint8_t upper = 0xBF;
};

LeadByte classify_lead(std::uint8_t byte) {
  LeadByte lead;
  if (byte < 0x80) {
    lead.valid = true;
  } else if (byte >= 0xC2 && byte <= 0xDF) {
    lead = {true, 1};
  } else if (byte >= 0xE0 && byte <= 0xEF) {
    lead = {true, 2};
    if (byte == 0xE0) lead.lower = 0xA0;
    if (byte == 0xED) lead.upper = 0x9F;
  } else if (byte >= 0xF0 && byte <= 0xF4) {
    lead = {true, 3};
    if (byte == 0xF0) lead.lower = 0x90;
    if (byte == 0xF4) lead.upper = 0x8F;
  }
  // Otherwise invalid: 80..BF without a lead, C0/C1 (always overlong), F5..FF.
  return lead;
}

}  // namespace

std::string Utf8StreamDecoder::push(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size() + held_len_);
  for (char c : bytes) accept(static_cast<std::uint8_t>(c), out);
  return out;
}

std::string Utf8StreamDecoder::flush() {
  std::string out;
  if (held_len_ > 0) out = kReplacementChar;
  held_len_ = 0;
  needed_ = 0;
  return out;
}

void Utf8StreamDecoder::accept(std::uint8_t byte, std::string& out) {
  if (needed_ == 0) {
    start(byte, out);
    return;
  }
  if (byte < lower_ || byte > upper_) {
    // The held bytes are a maximal invalid subpart: replace them, then look at this byte
    // afresh (it may start the next character).
    out += kReplacementChar;
    held_len_ = 0;
    needed_ = 0;
    start(byte, out);
    return;
  }
  held_[held_len_++] = static_cast<char>(byte);
  lower_ = 0x80;
  upper_ = 0xBF;
  if (--needed_ == 0) {
    out.append(held_, held_len_);
    held_len_ = 0;
  }
}

void Utf8StreamDecoder::start(std::uint8_t byte, std::string& out) {
  const LeadByte lead = classify_lead(byte);
  if (!lead.valid) {
    out += kReplacementChar;
  } else if (lead.continuation == 0) {
    out += static_cast<char>(byte);
  } else {
    held_[0] = static_cast<char>(byte);
    held_len_ = 1;
    needed_ = lead.continuation;
    lower_ = lead.lower;
    upper_ = lead.upper;
  }
}

}  // namespace kvscope
