// The per-block math of the quantized weight types, shared by the CUDA kernels and their
// CPU tests: plain C++ that nvcc and g++ both compile (no CUDA header is needed by g++).
// Block layouts are ggml's (engine/model/quant_blocks.h); the reference is the engine's
// dequantize_row / dot_row, which tests/kernels/quant_dequant_test.cpp checks these against
// on the host, lane by lane, so the index math is tested without a GPU.
//
// Each codec has:
//   value(block, i)    value i of a block, bit for bit as dequantize_row computes it (byte
//                      loads only: usable at any alignment);
//   load_x(xb, part, xv)  the kXPart activations that part `part` of a block multiplies;
//   load(block, part)  every weight byte the part needs, into registers (a Raw struct);
//   dot(raw, xv)       that part's share of the block's dot product (register math only).
// The matvec kernel splits every block kParts ways over the lanes of a warp, so one warp
// step covers 32 / kParts consecutive blocks of a row: contiguous bytes (lane_dots below).
//
// Vector loads in load / load_x are only issued at addresses whose alignment follows
// from the block size, given a 16-byte aligned row base (cudaMalloc gives 256) and a 16-byte
// aligned x: Q4_K (144 B) and Q5_K (176 B) blocks are 16-byte aligned, Q5_1 (24 B) 8, Q4_1
// (20 B) 4, and Q4_0 (18 B), Q5_0 (22 B), Q8_0 (34 B), Q6_K (210 B) only 2, so those read
// 16-bit halves. On the host the same loads check their alignment and throw
// std::logic_error, the fault a GPU would raise.
#pragma once

#include <bit>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "util/half.h"

#if defined(__CUDACC__)
#include <cuda_fp16.h>
#define KVSCOPE_HD __host__ __device__ __forceinline__
#else
#define KVSCOPE_HD inline
#endif

// Full unrolling of the small fixed loops keeps their arrays in registers on the device.
#if defined(__CUDA_ARCH__)
#define KVSCOPE_UNROLL _Pragma("unroll")
#else
#define KVSCOPE_UNROLL
#endif

namespace kvscope::cuda::qd {

inline constexpr int kLanes = 32;  // a warp

// --- Conversions and loads --------------------------------------------------------------

// fp16 bits -> float, exact on both sides (__half2float is exact for every fp16 value).
KVSCOPE_HD float half_to_float(std::uint32_t h) {
#if defined(__CUDA_ARCH__)
  return __half2float(__ushort_as_half(static_cast<unsigned short>(h)));
#else
  return fp16_to_float(static_cast<std::uint16_t>(h));
#endif
}

KVSCOPE_HD float bits_to_float(std::uint32_t b) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(b);
#else
  return std::bit_cast<float>(b);
#endif
}

// Byte k of `word` as the float 2^23 + byte, minus (2^23 + offset): the byte minus offset,
// exactly, with a bit-or and one add instead of a quarter-rate int-to-float conversion.
KVSCOPE_HD float byte_minus(std::uint32_t word, int k, float offset) {
  constexpr float kMagic = 8388608.0f;  // 2^23: the mantissa holds the byte
  return bits_to_float(0x4b000000u | ((word >> (8 * k)) & 0xffu)) - (kMagic + offset);
}

// sum_k (byte k of word - offset) * x[k] for the 4 bytes of a little-endian word.
KVSCOPE_HD float dot4(std::uint32_t word, float offset, const float* x) {
  float s = 0.0f;
  KVSCOPE_UNROLL
  for (int k = 0; k < 4; ++k) s += byte_minus(word, k, offset) * x[k];
  return s;
}

KVSCOPE_HD float sum_n(const float* x, int n) {
  float s = 0.0f;
  KVSCOPE_UNROLL
  for (int k = 0; k < n; ++k) s += x[k];
  return s;
}

// Host stand-in for the fault of a misaligned vector load on the GPU.
inline void check_aligned(const void* p, std::uintptr_t align, const char* what) {
  if (reinterpret_cast<std::uintptr_t>(p) % align != 0) {
    throw std::logic_error(std::string(what) + " at an address not aligned to " +
                           std::to_string(align) + " bytes");
  }
}

// Little-endian 16-bit value at a 2-byte aligned address.
KVSCOPE_HD std::uint32_t load_u16(const std::uint8_t* p) {
#if defined(__CUDA_ARCH__)
  return __ldg(reinterpret_cast<const unsigned short*>(p));
#else
  check_aligned(p, 2, "16-bit load");
  return static_cast<std::uint32_t>(p[0]) | (static_cast<std::uint32_t>(p[1]) << 8);
#endif
}

// 32-bit word at a 2-byte aligned address, as two 16-bit loads.
KVSCOPE_HD std::uint32_t load_u32_a2(const std::uint8_t* p) {
  return load_u16(p) | (load_u16(p + 2) << 16);
}

// 32-bit word at a 4-byte aligned address.
KVSCOPE_HD std::uint32_t load_u32(const std::uint8_t* p) {
#if defined(__CUDA_ARCH__)
  return __ldg(reinterpret_cast<const unsigned int*>(p));
#else
  check_aligned(p, 4, "32-bit load");
  return load_u16(p) | (load_u16(p + 2) << 16);
#endif
}

// 16 bytes at a 16-byte aligned address as 4 little-endian words.
KVSCOPE_HD void load_u128(const std::uint8_t* p, std::uint32_t* w) {
#if defined(__CUDA_ARCH__)
  const uint4 v = __ldg(reinterpret_cast<const uint4*>(p));
  w[0] = v.x;
  w[1] = v.y;
  w[2] = v.z;
  w[3] = v.w;
#else
  check_aligned(p, 16, "128-bit load");
  for (int k = 0; k < 4; ++k) w[k] = load_u32(p + 4 * k);
#endif
}

// 4 floats at a 16-byte aligned address.
KVSCOPE_HD void load_x4(const float* p, float* out) {
#if defined(__CUDA_ARCH__)
  const float4 v = __ldg(reinterpret_cast<const float4*>(p));
  out[0] = v.x;
  out[1] = v.y;
  out[2] = v.z;
  out[3] = v.w;
#else
  check_aligned(p, 16, "float4 load of x");
  for (int k = 0; k < 4; ++k) out[k] = p[k];
#endif
}

// n (a multiple of 4) consecutive floats at a 16-byte aligned address.
KVSCOPE_HD void load_xn(const float* p, int n, float* out) {
  KVSCOPE_UNROLL
  for (int k = 0; k < n; k += 4) load_x4(p + k, out + k);
}

// Unrounded products and sums as the CPU codecs compute them (no fused multiply-add), so
// value() is dequantize_row's bit for bit.
KVSCOPE_HD float mul_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}

KVSCOPE_HD float add_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}

KVSCOPE_HD float sub_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fsub_rn(a, b);
#else
  return a - b;
#endif
}

KVSCOPE_HD float half_at(const std::uint8_t* p) {  // fp16 from two bytes, any alignment
  return half_to_float(static_cast<std::uint32_t>(p[0]) | (static_cast<std::uint32_t>(p[1]) << 8));
}

// Bits 0..3 of b moved to bit 4 of bytes 0..3 (the 5th bit of four Q5_0/Q5_1 values).
KVSCOPE_HD std::uint32_t spread4_to_bit4(std::uint32_t b) {
  return ((b & 1u) << 4) | ((b & 2u) << 11) | ((b & 4u) << 18) | ((b & 8u) << 25);
}

inline constexpr std::uint32_t kLowNibbles = 0x0f0f0f0fu;

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
};

// value = (q - 8) * d. [d: fp16][qs: 16]
struct Q4_0 : Legacy {
  static constexpr const char* kName = "q4_0";
  static constexpr int kBytes = 18;
  static KVSCOPE_HD float value(const std::uint8_t* b, int i) {
    return mul_rn(static_cast<float>(static_cast<int>(nibble(b + 2, i)) - 8), half_at(b));
  }
  static KVSCOPE_HD Raw32 load(const std::uint8_t* b, int part) {  // 2-byte aligned loads
    return nibbles(load_u16(b), load_u32_a2(b + 2 + 4 * part));
  }
  static KVSCOPE_HD float dot(const Raw32& r, const float* xv) {
    return dot_raw32<8, false>(r, xv);
  }
};

// value = q * d + m. [d: fp16][m: fp16][qs: 16]
struct Q4_1 : Legacy {
  static constexpr const char* kName = "q4_1";
  static constexpr int kBytes = 20;
  static KVSCOPE_HD float value(const std::uint8_t* b, int i) {
    return add_rn(mul_rn(static_cast<float>(nibble(b + 4, i)), half_at(b)), half_at(b + 2));
  }
  static KVSCOPE_HD Raw32 load(const std::uint8_t* b, int part) {  // 4-byte aligned loads
    return nibbles(load_u32(b), load_u32(b + 4 + 4 * part));
  }
  static KVSCOPE_HD float dot(const Raw32& r, const float* xv) { return dot_raw32<0, true>(r, xv); }
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
struct Q5_0 : Legacy {
  static constexpr const char* kName = "q5_0";
  static constexpr int kBytes = 22;
  static KVSCOPE_HD float value(const std::uint8_t* b, int i) {
    return mul_rn(static_cast<float>(static_cast<int>(q5_at(b + 2, b + 6, i)) - 16), half_at(b));
  }
  static KVSCOPE_HD Raw32 load(const std::uint8_t* b, int part) {  // 2-byte aligned loads
    return q5_part(load_u16(b), load_u32_a2(b + 6 + 4 * part), load_u32_a2(b + 2), part);
  }
  static KVSCOPE_HD float dot(const Raw32& r, const float* xv) {
    return dot_raw32<16, false>(r, xv);
  }
};

// value = q * d + m. [d: fp16][m: fp16][qh: 4][qs: 16]
struct Q5_1 : Legacy {
  static constexpr const char* kName = "q5_1";
  static constexpr int kBytes = 24;
  static KVSCOPE_HD float value(const std::uint8_t* b, int i) {
    return add_rn(mul_rn(static_cast<float>(q5_at(b + 4, b + 8, i)), half_at(b)), half_at(b + 2));
  }
  static KVSCOPE_HD Raw32 load(const std::uint8_t* b, int part) {  // 4-byte aligned loads
    return q5_part(load_u32(b), load_u32(b + 8 + 4 * part), load_u32(b + 4), part);
  }
  static KVSCOPE_HD float dot(const Raw32& r, const float* xv) { return dot_raw32<0, true>(r, xv); }
};

// value = q * d, q int8. [d: fp16][qs: 32]
struct Q8_0 : Legacy {
  static constexpr const char* kName = "q8_0";
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
  static KVSCOPE_HD float dot(const Raw32& r, const float* xv) {
    return dot_raw32<128, false>(r, xv);
  }
};

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

// --- Rows -------------------------------------------------------------------------------

// Value c of a stored row (embedding lookups, the fp16 scratch of prompt GEMMs).
template <class Codec>
KVSCOPE_HD float row_value(const std::uint8_t* row, std::int64_t c) {
  return Codec::value(row + (c / Codec::kValues) * Codec::kBytes,
                      static_cast<int>(c % Codec::kValues));
}

// Part `part` of a block's dot product with its activations xv (load_x).
template <class Codec>
KVSCOPE_HD float part_dot(const std::uint8_t* block, int part, const float* xv) {
  return Codec::dot(Codec::load(block, part), xv);
}

// acc[r] += lane `lane`'s share of rows[r] . x for R rows of n_blocks blocks: the matvec
// kernel's whole per-lane work (the warp then sums acc over its lanes). Lane l takes part
// l % kParts of blocks l / kParts + k * kStep, so each warp step reads kStep consecutive
// blocks of every row, contiguous bytes; x is loaded once per step for all R rows. Every
// load of kUnroll steps is issued before their math, so that many steps are in flight.
// rows[r]: 16-byte aligned row starts (cudaMalloc base + r * row_bytes); x: 16-byte aligned.
template <class Codec, int R>
KVSCOPE_HD void lane_dots(const std::uint8_t* const* rows, const float* x, int n_blocks, int lane,
                          float* acc) {
  constexpr int kStep = kLanes / Codec::kParts;
  constexpr int kU = Codec::kUnroll;
  const int part = lane % Codec::kParts;
  int b = lane / Codec::kParts;
  for (; b + (kU - 1) * kStep < n_blocks; b += kU * kStep) {
    typename Codec::Raw raw[kU][R];
    float xv[kU][Codec::kXPart];
    KVSCOPE_UNROLL
    for (int u = 0; u < kU; ++u) {
      const int bu = b + u * kStep;
      Codec::load_x(x + bu * Codec::kValues, part, xv[u]);
      KVSCOPE_UNROLL
      for (int r = 0; r < R; ++r) raw[u][r] = Codec::load(rows[r] + bu * Codec::kBytes, part);
    }
    KVSCOPE_UNROLL
    for (int u = 0; u < kU; ++u) {
      KVSCOPE_UNROLL
      for (int r = 0; r < R; ++r) acc[r] += Codec::dot(raw[u][r], xv[u]);
    }
  }
  for (; b < n_blocks; b += kStep) {  // the last < kUnroll steps
    float xv[Codec::kXPart];
    Codec::load_x(x + b * Codec::kValues, part, xv);
    KVSCOPE_UNROLL
    for (int r = 0; r < R; ++r) acc[r] += part_dot<Codec>(rows[r] + b * Codec::kBytes, part, xv);
  }
}

}  // namespace kvscope::cuda::qd
