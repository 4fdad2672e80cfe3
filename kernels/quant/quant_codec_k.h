// The K-quant codecs (Q4_K, Q5_K, Q6_K): super-blocks of 256 values, each split in 8 parts
// of 32 over the lanes of a warp. The interface is quant_dequant.h's.
#pragma once

#include "quant/quant_codec_base.h"

namespace kvscope::cuda::qd {

// --- K-quants: super-blocks of 256 values, 8 parts of 32 values ---------------------------

// Sub-block j's 6-bit scale and min from the 12 packed bytes of Q4_K/Q5_K (as
// quants::scale_min_k4): j < 4 in the low 6 bits of bytes j and j + 4; j >= 4 take 4 bits
// from byte j + 4 and their top 2 bits from bytes j - 4 (scale) and j (min).
KVSCOPE_HD void scale_min_k4(const std::uint8_t* q, int j, std::uint32_t& sc, std::uint32_t& m) {
  if (j < 4) {
    sc = q[j] & 63u;
    m = q[j + 4] & 63u;
  } else {
    sc = (q[j + 4] & 0x0fu) | ((static_cast<std::uint32_t>(q[j - 4]) >> 6) << 4);
    m = (static_cast<std::uint32_t>(q[j + 4]) >> 4) |
        ((static_cast<std::uint32_t>(q[j]) >> 6) << 4);
  }
}

// One part of a Q4_K / Q5_K super-block in registers.
struct RawK {
  std::uint32_t dd;            // d | dmin << 16
  std::uint32_t sm;            // sc0 | m0 << 8 | sc1 << 16 | m1 << 24: sub-blocks 2c, 2c + 1
  std::uint32_t lo[4], hi[4];  // quants of xv[0..16) and xv[16..32), one per byte
};

// Q4_K / Q5_K: value = d * sc[j] * q - dmin * m[j] for sub-block j = i / 32. The quants of
// values 64c + l (low nibble) and 64c + 32 + l (high) share byte 32c + l of qs. Part p
// takes c = p / 2 and l in [16 (p % 2), +16): 16 qs bytes, the values of sub-blocks 2c
// (low nibbles, xv[0..16)) and 2c + 1 (high nibbles, xv[16..32)).
struct K4 {
  using Raw = RawK;
  static constexpr int kValues = 256;
  static constexpr int kParts = 8;
  static constexpr int kXPart = 32;
  static constexpr int kUnroll = 1;  // a step already loads 16-32 bytes a lane and row
  static KVSCOPE_HD void load_x(const float* xb, int part, float* xv) {
    const float* x0 = xb + 64 * (part >> 1) + 16 * (part & 1);  // 64-byte aligned offsets
    load_xn(x0, 16, xv);
    load_xn(x0 + 32, 16, xv + 16);
  }
  // d * sc * q - dmin * m in the CPU's order; q is value i's quant.
  static KVSCOPE_HD float value_of(const std::uint8_t* b, int i, std::uint32_t q) {
    std::uint32_t sc = 0, m = 0;
    scale_min_k4(b + 4, i / 32, sc, m);
    const float scale = mul_rn(half_at(b), static_cast<float>(sc));
    const float min = mul_rn(half_at(b + 2), static_cast<float>(m));
    return sub_rn(mul_rn(scale, static_cast<float>(q)), min);
  }
  // The part's header and nibbles (16 qs bytes at qs, 16-byte aligned).
  static KVSCOPE_HD RawK load_nibbles(const std::uint8_t* b, int part, const std::uint8_t* qs) {
    RawK r;
    r.dd = load_u32(b);  // the block is 16-byte aligned
    std::uint32_t sc0 = 0, m0 = 0, sc1 = 0, m1 = 0;
    scale_min_k4(b + 4, 2 * (part >> 1), sc0, m0);
    scale_min_k4(b + 4, 2 * (part >> 1) + 1, sc1, m1);
    r.sm = sc0 | (m0 << 8) | (sc1 << 16) | (m1 << 24);
    std::uint32_t w[4];
    load_u128(qs, w);
    KVSCOPE_UNROLL
    for (int k = 0; k < 4; ++k) {
      r.lo[k] = w[k] & kLowNibbles;
      r.hi[k] = (w[k] >> 4) & kLowNibbles;
    }
    return r;
  }
  // The 8-bit activations of load_x's values: sub-blocks 2c and 2c + 1 are the activation
  // blocks 8 sb + 2c and + 1 of super-block sb.
  static KVSCOPE_HD void load_xq(const std::int8_t* q, const float* d, int sb, int part,
                                 XQ8Part& x) {
    const int c = part >> 1;
    const auto* q0 = reinterpret_cast<const std::uint8_t*>(q) + 256 * sb + 64 * c + 16 * (part & 1);
    load_u128(q0, x.q);
    load_u128(q0 + 32, x.q + 4);
    x.d[0] = load_f(d + 8 * sb + 2 * c);
    x.d[1] = load_f(d + 8 * sb + 2 * c + 1);
  }
  // Per sub-block, in integers: sc * sum q q_x and m * sum q_x; then the float scales.
  static KVSCOPE_HD float dot_q8(const RawK& r, const XQ8Part& x) {
    int lo = 0, hi = 0, slo = 0, shi = 0;
    KVSCOPE_UNROLL
    for (int k = 0; k < 4; ++k) {
      lo = dp4a(r.lo[k], x.q[k], lo), hi = dp4a(r.hi[k], x.q[4 + k], hi);
      slo = sum4(x.q[k], slo), shi = sum4(x.q[4 + k], shi);
    }
    const auto byte = [&](int k) { return static_cast<int>((r.sm >> (8 * k)) & 0xffu); };
    const float d = half_to_float(r.dd & 0xffffu), dmin = half_to_float(r.dd >> 16);
    const auto f = [](int v) { return static_cast<float>(v); };
    return x.d[0] * (d * f(byte(0) * lo) - dmin * f(byte(1) * slo)) +
           x.d[1] * (d * f(byte(2) * hi) - dmin * f(byte(3) * shi));
  }
  static KVSCOPE_HD float dot(const RawK& r, const float* xv) {
    float qlo = 0.0f, qhi = 0.0f;
    KVSCOPE_UNROLL
    for (int k = 0; k < 4; ++k) {
      qlo += dot4(r.lo[k], 0.0f, xv + 4 * k);
      qhi += dot4(r.hi[k], 0.0f, xv + 16 + 4 * k);
    }
    const auto byte = [&](int k) { return static_cast<float>((r.sm >> (8 * k)) & 0xffu); };
    return half_to_float(r.dd & 0xffffu) * (byte(0) * qlo + byte(2) * qhi) -
           half_to_float(r.dd >> 16) * (byte(1) * sum_n(xv, 16) + byte(3) * sum_n(xv + 16, 16));
  }
};

// [d: fp16][dmin: fp16][scales: 12][qs: 128]
struct Q4_K : K4 {
  static constexpr const char* kName = "q4_K";
  static constexpr int kAlign = 16;
  static constexpr int kBytes = 144;
  static KVSCOPE_HD float value(const std::uint8_t* b, int i) {
    const std::uint32_t byte = b[16 + 32 * (i / 64) + i % 32];
    return value_of(b, i, i % 64 < 32 ? (byte & 0x0fu) : (byte >> 4));
  }
  static KVSCOPE_HD RawK load(const std::uint8_t* b, int part) {
    return load_nibbles(b, part, b + 16 + 32 * (part >> 1) + 16 * (part & 1));
  }
};

// As Q4_K with a 5th bit: bit 2c of qh[l] for value 64c + l, bit 2c + 1 for 64c + 32 + l.
// [d: fp16][dmin: fp16][scales: 12][qh: 32][qs: 128]
struct Q5_K : K4 {
  static constexpr const char* kName = "q5_K";
  static constexpr int kAlign = 16;
  static constexpr int kBytes = 176;
  static KVSCOPE_HD float value(const std::uint8_t* b, int i) {
    const int l = i % 32, c = i / 64, high = i % 64 < 32 ? 0 : 1;
    const std::uint32_t byte = b[48 + 32 * c + l];
    const std::uint32_t nib = high ? (byte >> 4) : (byte & 0x0fu);
    const std::uint32_t bit5 = (static_cast<std::uint32_t>(b[16 + l]) >> (2 * c + high)) & 1u;
    return value_of(b, i, nib | (bit5 << 4));
  }
  static KVSCOPE_HD RawK load(const std::uint8_t* b, int part) {
    const int c = part >> 1;
    RawK r = load_nibbles(b, part, b + 48 + 32 * c + 16 * (part & 1));
    std::uint32_t h[4];
    load_u128(b + 16 + 16 * (part & 1), h);  // qh[l] of the part's 16 l: 16-byte aligned
    KVSCOPE_UNROLL
    for (int k = 0; k < 4; ++k) {
      r.lo[k] |= ((h[k] >> (2 * c)) & 0x01010101u) << 4;
      r.hi[k] |= ((h[k] >> (2 * c + 1)) & 0x01010101u) << 4;
    }
    return r;
  }
};

// One part of a Q6_K super-block in registers.
struct RawQ6K {
  std::uint32_t d;        // fp16 bits
  std::uint32_t scales;   // the int8 scales of xv[8k..8k+8) in byte k
  std::uint32_t q[4][2];  // 6-bit quants of xv[8k + 4w..), one per byte
};

// 16 groups of 16: value = d * scales[g] * (q - 32), q 6 bits. Per half hh of 128 values,
// for l < 32: value 32k + l has its low 4 bits in ql[64hh + l + 32 (k & 1)] (low nibble for
// k < 2, high for k >= 2) and bits 4-5 in bits 2k..2k+1 of qh[32hh + l].
// [ql: 128][qh: 64][scales: 16 int8][d: fp16]. Part p takes hh = p / 4 and l in [8 (p % 4),
// +8): 8 bytes each of ql, ql + 32 and qh, values 128hh + 32k + l (xv[8k..8k+8)).
struct Q6_K {
  using Raw = RawQ6K;
  static constexpr const char* kName = "q6_K";
  static constexpr int kAlign = 2;
  static constexpr int kValues = 256;
  static constexpr int kBytes = 210;
  static constexpr int kParts = 8;
  static constexpr int kXPart = 32;
  static constexpr int kUnroll = 1;
  static KVSCOPE_HD float value(const std::uint8_t* b, int i) {
    const int hh = i / 128, k = i % 128 / 32, l = i % 32;
    const std::uint32_t ql = b[64 * hh + l + 32 * (k & 1)];
    const std::uint32_t low = k < 2 ? (ql & 0x0fu) : (ql >> 4);
    const std::uint32_t high = (static_cast<std::uint32_t>(b[128 + 32 * hh + l]) >> (2 * k)) & 3u;
    const int q = static_cast<int>(low | (high << 4)) - 32;
    const auto sc = static_cast<std::int8_t>(b[192 + i / 16]);
    return mul_rn(mul_rn(half_at(b + 208), static_cast<float>(sc)), static_cast<float>(q));
  }
  static KVSCOPE_HD void load_x(const float* xb, int part, float* xv) {
    const float* x0 = xb + 128 * (part >> 2) + 8 * (part & 3);  // 32-byte aligned offsets
    KVSCOPE_UNROLL
    for (int k = 0; k < 4; ++k) load_xn(x0 + 32 * k, 8, xv + 8 * k);
  }
  static KVSCOPE_HD RawQ6K load(const std::uint8_t* b, int part) {
    const int hh = part >> 2, l0 = 8 * (part & 3);
    const std::uint8_t* ql = b + 64 * hh + l0;  // every offset even: 2-byte aligned loads
    const std::uint8_t* qh = b + 128 + 32 * hh + l0;
    const std::uint8_t* sc = b + 192 + 8 * hh + (l0 >> 4);  // groups 8hh + 2k + l0 / 16
    RawQ6K r;
    r.d = load_u16(b + 208);
    r.scales = 0;
    KVSCOPE_UNROLL
    for (int k = 0; k < 4; ++k) r.scales |= static_cast<std::uint32_t>(sc[2 * k]) << (8 * k);
    KVSCOPE_UNROLL
    for (int w = 0; w < 2; ++w) {
      const std::uint32_t a = load_u32_a2(ql + 4 * w), a32 = load_u32_a2(ql + 32 + 4 * w);
      const std::uint32_t h = load_u32_a2(qh + 4 * w);
      r.q[0][w] = (a & kLowNibbles) | ((h & 0x03030303u) << 4);
      r.q[1][w] = (a32 & kLowNibbles) | (((h >> 2) & 0x03030303u) << 4);
      r.q[2][w] = ((a >> 4) & kLowNibbles) | (((h >> 4) & 0x03030303u) << 4);
      r.q[3][w] = ((a32 >> 4) & kLowNibbles) | (((h >> 6) & 0x03030303u) << 4);
    }
    return r;
  }
  // The 8-bit activations of load_x's values: xv[8k..8k+8) lie in activation block
  // 8 sb + 4hh + k.
  static KVSCOPE_HD void load_xq(const std::int8_t* q, const float* d, int sb, int part,
                                 XQ8Part& x) {
    const int hh = part >> 2;
    const auto* q0 =
        reinterpret_cast<const std::uint8_t*>(q) + 256 * sb + 128 * hh + 8 * (part & 3);
    KVSCOPE_UNROLL
    for (int k = 0; k < 4; ++k) {
      x.q[2 * k] = load_u32(q0 + 32 * k);
      x.q[2 * k + 1] = load_u32(q0 + 32 * k + 4);
      x.d[k] = load_f(d + 8 * sb + 4 * hh + k);
    }
  }
  // sum (q - 32) q_x exactly in integers: the - 32 is a dp4a with bytes of -32 (0xE0).
  static KVSCOPE_HD float dot_q8(const RawQ6K& r, const XQ8Part& x) {
    constexpr std::uint32_t kMinus32 = 0xe0e0e0e0u;
    float total = 0.0f;
    KVSCOPE_UNROLL
    for (int k = 0; k < 4; ++k) {
      const std::uint32_t a = x.q[2 * k], b = x.q[2 * k + 1];
      const int qx =
          dp4a(r.q[k][0], a, dp4a(r.q[k][1], b, dp4a(kMinus32, a, dp4a(kMinus32, b, 0))));
      const auto sc = static_cast<float>(static_cast<std::int8_t>((r.scales >> (8 * k)) & 0xffu));
      total += sc * (x.d[k] * static_cast<float>(qx));
    }
    return half_to_float(r.d) * total;
  }
  static KVSCOPE_HD float dot(const RawQ6K& r, const float* xv) {
    float total = 0.0f;
    KVSCOPE_UNROLL
    for (int k = 0; k < 4; ++k) {
      const float s = dot4(r.q[k][0], 32.0f, xv + 8 * k) + dot4(r.q[k][1], 32.0f, xv + 8 * k + 4);
      total += static_cast<float>(static_cast<std::int8_t>((r.scales >> (8 * k)) & 0xffu)) * s;
    }
    return half_to_float(r.d) * total;
  }
};

}  // namespace kvscope::cuda::qd
