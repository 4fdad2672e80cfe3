// The legacy quant codecs (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0): blocks of 32 values, each split
// in 4 parts of 8 over the lanes of a warp. The interface is quant_dequant.h's.
#pragma once

#include "quant/quant_codec_base.h"

namespace kvscope::cuda::qd {

// --- Legacy quants: blocks of 32 values, 4 parts of 8 values --------------------------
// Nibble types: qs[j] holds value j (low nibble) and j + 16 (high); part p reads
// qs[4p, 4p + 4), i.e. values 4p..4p+3 and 16+4p..16+4p+3. Q8_0: part p reads qs[8p, 8p + 8).

// One part of a legacy block in registers: the scale word (d, or d | m << 16) and the
// quants of its 8 values one per byte, the values xv[0..4) in lo and xv[4..8) in hi.
struct Raw32 {
  std::uint32_t dm, lo, hi;
};

// d * sum (q - kOffset) * x [+ m * sum x] over the part's 8 values.
template <int kOffset, bool kHasMin>
KVSCOPE_HD float dot_raw32(const Raw32& r, const float* xv) {
  const float qx = dot4(r.lo, kOffset, xv) + dot4(r.hi, kOffset, xv + 4);
  if constexpr (kHasMin) {
    return half_to_float(r.dm & 0xffffu) * qx + half_to_float(r.dm >> 16) * sum_n(xv, 8);
  } else {
    return half_to_float(r.dm) * qx;
  }
}

// The 8-bit activations' version of dot_raw32 (quant_activations.h), all sums in integers:
// d_x * (d * sum (q - kOffset) q_x) with the offset a dp4a of bytes -kOffset, or
// d_x * (d * sum q q_x + m * sum q_x).
template <int kOffset, bool kHasMin>
KVSCOPE_HD float dot_q8_raw32(const Raw32& r, const XQ8Part& x) {
  int qx = dp4a(r.lo, x.q[0], dp4a(r.hi, x.q[1], 0));
  if constexpr (kHasMin) {
    const auto sx = static_cast<float>(sum4(x.q[0], sum4(x.q[1], 0)));
    return x.d[0] * (half_to_float(r.dm & 0xffffu) * static_cast<float>(qx) +
                     half_to_float(r.dm >> 16) * sx);
  } else {
    constexpr std::uint32_t kMinus = 0x01010101u * static_cast<std::uint8_t>(-kOffset);
    qx = dp4a(kMinus, x.q[0], dp4a(kMinus, x.q[1], qx));
    return x.d[0] * (half_to_float(r.dm) * static_cast<float>(qx));
  }
}

struct Legacy {
  using Raw = Raw32;
  static constexpr int kValues = 32;
  static constexpr int kParts = 4;
  static constexpr int kXPart = 8;
  static constexpr int kUnroll = 4;  // warp steps whose loads are in flight together
  // xv[0..4) = x[4p..), xv[4..8) = x[16 + 4p..): 16-byte aligned offsets
  static KVSCOPE_HD void load_x(const float* xb, int part, float* xv) {
    load_x4(xb + 4 * part, xv);
    load_x4(xb + 16 + 4 * part, xv + 4);
  }
  // The 4-bit quant of value i from the 16 qs bytes.
  static KVSCOPE_HD std::uint32_t nibble(const std::uint8_t* qs, int i) {
    return i < 16 ? (qs[i] & 0x0fu) : (qs[i - 16] >> 4);
  }
  static KVSCOPE_HD Raw32 nibbles(std::uint32_t dm, std::uint32_t qs_word) {
    return {dm, qs_word & kLowNibbles, (qs_word >> 4) & kLowNibbles};
  }
  // The 8-bit activations of load_x's values: codes at block offsets 4p and 16 + 4p.
  // q: the row's codes, d: its [blocks] scales; 16-byte aligned.
  static KVSCOPE_HD void load_xq(const std::int8_t* q, const float* d, int block, int part,
                                 XQ8Part& x) {
    const auto* qb = reinterpret_cast<const std::uint8_t*>(q) + block * 32;
    x.q[0] = load_u32(qb + 4 * part);
    x.q[1] = load_u32(qb + 16 + 4 * part);
    x.d[0] = load_f(d + block);
  }
};

// A legacy type's dot products, from its offset (value = (q - kOffset) * d) or its minimum
// (value = q * d + m).
template <int kOffset, bool kHasMin>
struct LegacyDots : Legacy {
  static KVSCOPE_HD float dot(const Raw32& r, const float* xv) {
    return dot_raw32<kOffset, kHasMin>(r, xv);
  }
  static KVSCOPE_HD float dot_q8(const Raw32& r, const XQ8Part& x) {
    return dot_q8_raw32<kOffset, kHasMin>(r, x);
  }
};

// value = (q - 8) * d. [d: fp16][qs: 16]
struct Q4_0 : LegacyDots<8, false> {
  static constexpr const char* kName = "q4_0";
  static constexpr int kAlign = 2;
  static constexpr int kBytes = 18;
  static KVSCOPE_HD float value(const std::uint8_t* b, int i) {
    return mul_rn(static_cast<float>(static_cast<int>(nibble(b + 2, i)) - 8), half_at(b));
  }
  static KVSCOPE_HD Raw32 load(const std::uint8_t* b, int part) {  // 2-byte aligned loads
    return nibbles(load_u16(b), load_u32_a2(b + 2 + 4 * part));
  }
};

// value = q * d + m. [d: fp16][m: fp16][qs: 16]
struct Q4_1 : LegacyDots<0, true> {
  static constexpr const char* kName = "q4_1";
  static constexpr int kAlign = 4;
  static constexpr int kBytes = 20;
  static KVSCOPE_HD float value(const std::uint8_t* b, int i) {
    return add_rn(mul_rn(static_cast<float>(nibble(b + 4, i)), half_at(b)), half_at(b + 2));
  }
  static KVSCOPE_HD Raw32 load(const std::uint8_t* b, int part) {  // 4-byte aligned loads
    return nibbles(load_u32(b), load_u32(b + 4 + 4 * part));
  }
};

// The 5-bit quant of value i: nibble | bit i of the little-endian qh word << 4.
KVSCOPE_HD std::uint32_t q5_at(const std::uint8_t* qh, const std::uint8_t* qs, int i) {
  const std::uint32_t h =
      static_cast<std::uint32_t>(qh[0]) | (static_cast<std::uint32_t>(qh[1]) << 8) |
      (static_cast<std::uint32_t>(qh[2]) << 16) | (static_cast<std::uint32_t>(qh[3]) << 24);
  return Legacy::nibble(qs, i) | (((h >> i) & 1u) << 4);
}

// The part's 5-bit quants: its nibbles with bits 4p.. and 16 + 4p.. of qh as bit 4.
KVSCOPE_HD Raw32 q5_part(std::uint32_t dm, std::uint32_t qs_word, std::uint32_t qh, int part) {
  Raw32 r = Legacy::nibbles(dm, qs_word);
  r.lo |= spread4_to_bit4((qh >> (4 * part)) & 0xfu);
  r.hi |= spread4_to_bit4((qh >> (16 + 4 * part)) & 0xfu);
  return r;
}

// value = (q - 16) * d. [d: fp16][qh: 4][qs: 16]
struct Q5_0 : LegacyDots<16, false> {
  static constexpr const char* kName = "q5_0";
  static constexpr int kAlign = 2;
  static constexpr int kBytes = 22;
  static KVSCOPE_HD float value(const std::uint8_t* b, int i) {
    return mul_rn(static_cast<float>(static_cast<int>(q5_at(b + 2, b + 6, i)) - 16), half_at(b));
  }
  static KVSCOPE_HD Raw32 load(const std::uint8_t* b, int part) {  // 2-byte aligned loads
    return q5_part(load_u16(b), load_u32_a2(b + 6 + 4 * part), load_u32_a2(b + 2), part);
  }
};

// value = q * d + m. [d: fp16][m: fp16][qh: 4][qs: 16]
struct Q5_1 : LegacyDots<0, true> {
  static constexpr const char* kName = "q5_1";
  static constexpr int kAlign = 4;
  static constexpr int kBytes = 24;
  static KVSCOPE_HD float value(const std::uint8_t* b, int i) {
    return add_rn(mul_rn(static_cast<float>(q5_at(b + 4, b + 8, i)), half_at(b)), half_at(b + 2));
  }
  static KVSCOPE_HD Raw32 load(const std::uint8_t* b, int part) {  // 4-byte aligned loads
    return q5_part(load_u32(b), load_u32(b + 8 + 4 * part), load_u32(b + 4), part);
  }
};

// value = q * d, q int8. [d: fp16][qs: 32]
struct Q8_0 : LegacyDots<128, false> {
  static constexpr const char* kName = "q8_0";
  static constexpr int kAlign = 2;
  static constexpr int kBytes = 34;
  static KVSCOPE_HD float value(const std::uint8_t* b, int i) {
    return mul_rn(static_cast<float>(static_cast<std::int8_t>(b[2 + i])), half_at(b));
  }
  static KVSCOPE_HD void load_x(const float* xb, int part, float* xv) {
    load_xn(xb + 8 * part, 8, xv);
  }
  // int8 s kept as the byte s + 128 (sign bit flipped); dot subtracts the 128.
  static KVSCOPE_HD Raw32 load(const std::uint8_t* b, int part) {  // 2-byte aligned loads
    const std::uint8_t* q = b + 2 + 8 * part;
    return {load_u16(b), load_u32_a2(q) ^ 0x80808080u, load_u32_a2(q + 4) ^ 0x80808080u};
  }
  // codes at block offset 8p, as load_x
  static KVSCOPE_HD void load_xq(const std::int8_t* q, const float* d, int block, int part,
                                 XQ8Part& x) {
    const auto* qb = reinterpret_cast<const std::uint8_t*>(q) + block * 32 + 8 * part;
    x.q[0] = load_u32(qb);
    x.q[1] = load_u32(qb + 4);
    x.d[0] = load_f(d + block);
  }
  // the stored bytes flipped back to the signed quants: no offset term
  static KVSCOPE_HD float dot_q8(const Raw32& r, const XQ8Part& x) {
    const int qx = dp4a(r.lo ^ 0x80808080u, x.q[0], dp4a(r.hi ^ 0x80808080u, x.q[1], 0));
    return x.d[0] * (half_to_float(r.dm) * static_cast<float>(qx));
  }
};

}  // namespace kvscope::cuda::qd
