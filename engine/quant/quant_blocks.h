// Quantized block layouts, byte for byte as ggml stores them (ggml-common.h), and the small
// helpers the CPU reference codecs share. Internal to engine/quant: callers use
// dequantize_row / quantize_row / dot_row from tensor_type.h.
//
// Every struct here has alignment 1 (fp16 scales are kept as two little-endian bytes), so
// a block may be read in place at any byte offset of a mapped GGUF file.
#pragma once

#include <bit>
#include <cstdint>

#include "util/half.h"

namespace kvscope::quants {

// GGUF data is little-endian; F32/F16/BF16 rows are read with plain loads.
static_assert(std::endian::native == std::endian::little, "KVScope reads GGUF data in place");

inline constexpr int kQK = 32;          // values per block of the legacy quants (Q4_0 .. Q8_0)
inline constexpr int kQK_K = 256;       // values per super-block of the K-quants
inline constexpr int kKScaleSize = 12;  // bytes of packed 6-bit scales and mins in Q4_K/Q5_K

// An IEEE fp16 value as the two little-endian bytes a GGUF file holds.
struct Half {
  std::uint8_t bytes[2];

  std::uint16_t bits() const {
    return static_cast<std::uint16_t>(bytes[0] | (static_cast<unsigned>(bytes[1]) << 8));
  }
  float to_float() const { return fp16_to_float(bits()); }
  static Half from_float(float f) { return from_bits(float_to_fp16(f)); }
  static Half from_bits(std::uint16_t h) {
    return Half{{static_cast<std::uint8_t>(h & 0xffu), static_cast<std::uint8_t>(h >> 8)}};
  }
};

// value = (q - 8) * d, q the 4-bit quant. qs[j] holds value j (low nibble) and j + 16 (high).
struct BlockQ4_0 {
  Half d;
  std::uint8_t qs[kQK / 2];
};

// value = q * d + m
struct BlockQ4_1 {
  Half d;
  Half m;
  std::uint8_t qs[kQK / 2];
};

// value = (q - 16) * d; the 5th bit of value i is bit i of qh read as a little-endian uint32.
struct BlockQ5_0 {
  Half d;
  std::uint8_t qh[4];
  std::uint8_t qs[kQK / 2];
};

// value = q * d + m, bits laid out as in BlockQ5_0.
struct BlockQ5_1 {
  Half d;
  Half m;
  std::uint8_t qh[4];
  std::uint8_t qs[kQK / 2];
};

// value = q * d
struct BlockQ8_0 {
  Half d;
  std::int8_t qs[kQK];
};

// 8 sub-blocks of 32: value = d * sc[j] * q - dmin * m[j], with 6-bit sc/m packed in
// `scales` (see scale_min_k4). qs[32c + l] holds value 64c + l (low) and 64c + 32 + l (high).
struct BlockQ4_K {
  Half d;
  Half dmin;
  std::uint8_t scales[kKScaleSize];
  std::uint8_t qs[kQK_K / 2];
};

// As BlockQ4_K with a 5th bit: bit 2c of qh[l] for value 64c + l, bit 2c+1 for 64c + 32 + l.
struct BlockQ5_K {
  Half d;
  Half dmin;
  std::uint8_t scales[kKScaleSize];
  std::uint8_t qh[kQK_K / 8];
  std::uint8_t qs[kQK_K / 2];
};

// 16 groups of 16: value = d * scales[g] * (q - 32), q 6 bits: 4 in ql, 2 in qh.
// Per half h of 128 values, with ql += 64h, qh += 32h, l in [0, 32):
//   value l      : ql[l] low,       qh[l] bits 0-1
//   value l + 32 : ql[l + 32] low,  qh[l] bits 2-3
//   value l + 64 : ql[l] high,      qh[l] bits 4-5
//   value l + 96 : ql[l + 32] high, qh[l] bits 6-7
struct BlockQ6_K {
  std::uint8_t ql[kQK_K / 2];
  std::uint8_t qh[kQK_K / 4];
  std::int8_t scales[kQK_K / 16];
  Half d;
};

static_assert(sizeof(Half) == 2 && alignof(Half) == 1);
static_assert(sizeof(BlockQ4_0) == 18 && alignof(BlockQ4_0) == 1);
static_assert(sizeof(BlockQ4_1) == 20 && alignof(BlockQ4_1) == 1);
static_assert(sizeof(BlockQ5_0) == 22 && alignof(BlockQ5_0) == 1);
static_assert(sizeof(BlockQ5_1) == 24 && alignof(BlockQ5_1) == 1);
static_assert(sizeof(BlockQ8_0) == 34 && alignof(BlockQ8_0) == 1);
static_assert(sizeof(BlockQ4_K) == 144 && alignof(BlockQ4_K) == 1);
static_assert(sizeof(BlockQ5_K) == 176 && alignof(BlockQ5_K) == 1);
static_assert(sizeof(BlockQ6_K) == 210 && alignof(BlockQ6_K) == 1);

// Sub-block j's 6-bit scale and min from the 12 packed bytes of Q4_K/Q5_K: j < 4 sit in
// the low 6 bits of bytes j and j+4; j >= 4 take 4 bits from byte j+4 and their top 2 bits
// from the spare high bits of bytes j-4 (scale) and j (min).
inline void scale_min_k4(int j, const std::uint8_t* q, std::uint8_t& sc, std::uint8_t& m) {
  if (j < 4) {
    sc = q[j] & 63;
    m = q[j + 4] & 63;
  } else {
    sc = static_cast<std::uint8_t>((q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4));
    m = static_cast<std::uint8_t>((q[j + 4] >> 4) | ((q[j] >> 6) << 4));
  }
}

// Inverse of scale_min_k4 for all 8 sub-blocks; sc and m must be < 64.
inline void pack_scale_min_k4(const std::uint8_t* sc, const std::uint8_t* m, std::uint8_t* q) {
  for (int j = 0; j < 4; ++j) {
    q[j] = sc[j];
    q[j + 4] = m[j];
  }
  for (int j = 4; j < 8; ++j) {
    q[j + 4] = static_cast<std::uint8_t>((sc[j] & 0xF) | ((m[j] & 0xF) << 4));
    q[j - 4] = static_cast<std::uint8_t>(q[j - 4] | ((sc[j] >> 4) << 6));
    q[j] = static_cast<std::uint8_t>(q[j] | ((m[j] >> 4) << 6));
  }
}

// Round to nearest, ties to even, as ggml's nearest_int does (valid for |f| <= 2^22):
// adding 1.5 * 2^23 leaves the rounded integer in the low mantissa bits.
inline int nearest_int(float f) {
  const float v = f + 12582912.0f;
  return static_cast<int>(std::bit_cast<std::uint32_t>(v) & 0x007fffffu) - 0x00400000;
}

// fp16 -> float without branches (selects are bit masks), so a fixed-length loop over it
// vectorises at -O2; equal to fp16_to_float for every input. Subnormals are renormalised
// with one float subtraction of 2^-14.
inline float fp16_to_float_branchless(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t shifted = static_cast<std::uint32_t>(h & 0x7fffu) << 13;
  const std::uint32_t exp = shifted & 0x0f800000u;
  const std::uint32_t normal = shifted + (112u << 23);  // rebias 15 -> 127
  const std::uint32_t special = normal + (112u << 23);  // inf/NaN: exponent 255
  const float sub = std::bit_cast<float>(normal + (1u << 23)) - std::bit_cast<float>(113u << 23);
  const std::uint32_t is_special = 0u - static_cast<std::uint32_t>(exp == 0x0f800000u);
  const std::uint32_t is_sub = 0u - static_cast<std::uint32_t>(exp == 0);
  const std::uint32_t magnitude = (normal & ~(is_special | is_sub)) | (special & is_special) |
                                  (std::bit_cast<std::uint32_t>(sub) & is_sub);
  return std::bit_cast<float>(sign | magnitude);
}

// sum_i q[i] * x[i] and sum_i x[i] over a sub-block of N quants (N a multiple of 8). Eight
// independent partial sums let the compiler keep them in vector registers.
template <int N>
inline void dot_and_sum(const std::int8_t* q, const float* x, float& dot, float& sum) {
  static_assert(N % 8 == 0);
  float d[8] = {};
  float s[8] = {};
  for (int i = 0; i < N; i += 8) {
#pragma GCC unroll 8
    for (int k = 0; k < 8; ++k) {
      d[k] += static_cast<float>(q[i + k]) * x[i + k];
      s[k] += x[i + k];
    }
  }
  dot = ((d[0] + d[1]) + (d[2] + d[3])) + ((d[4] + d[5]) + (d[6] + d[7]));
  sum = ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}

// sum_i q[i] * x[i] over a group of N quants (N a multiple of 8).
template <int N>
inline float dot_q(const std::int8_t* q, const float* x) {
  static_assert(N % 8 == 0);
  float d[8] = {};
  for (int i = 0; i < N; i += 8) {
#pragma GCC unroll 8
    for (int k = 0; k < 8; ++k) d[k] += static_cast<float>(q[i + k]) * x[i + k];
  }
  return ((d[0] + d[1]) + (d[2] + d[3])) + ((d[4] + d[5]) + (d[6] + d[7]));
}

// sum_i a[i] * b[i] for any n, with 16 independent partial sums (vectorised at -O2).
float dot_f32_f32(const float* a, const float* b, std::int64_t n);

// Per-type codecs. n is a multiple of the type's block size (checked by the dispatcher);
// src/dst point at n / block_elems consecutive blocks.
#define KVSCOPE_DECLARE_QUANT_CODEC(name)                              \
  void dequantize_##name(const void* src, float* dst, std::int64_t n); \
  void quantize_##name(const float* x, void* dst, std::int64_t n);     \
  float dot_##name(const void* row, const float* x, std::int64_t n)

KVSCOPE_DECLARE_QUANT_CODEC(f32);
KVSCOPE_DECLARE_QUANT_CODEC(f16);
KVSCOPE_DECLARE_QUANT_CODEC(bf16);
KVSCOPE_DECLARE_QUANT_CODEC(q4_0);
KVSCOPE_DECLARE_QUANT_CODEC(q4_1);
KVSCOPE_DECLARE_QUANT_CODEC(q5_0);
KVSCOPE_DECLARE_QUANT_CODEC(q5_1);
KVSCOPE_DECLARE_QUANT_CODEC(q8_0);
KVSCOPE_DECLARE_QUANT_CODEC(q4_K);
KVSCOPE_DECLARE_QUANT_CODEC(q5_K);
KVSCOPE_DECLARE_QUANT_CODEC(q6_K);

#undef KVSCOPE_DECLARE_QUANT_CODEC

}  // namespace kvscope::quants
