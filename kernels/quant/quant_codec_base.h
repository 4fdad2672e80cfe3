// The shared ground of the quantized-weight codecs (quant_dequant.h): the host/device macro,
// exact fp16 and int conversions, loads that check their alignment on the host (the fault a
// GPU would raise), and IEEE-rounded arithmetic that does not fuse on either side.
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

// --- 8-bit activations (quant_activations.h) ---------------------------------------------

// c + sum over k of (signed byte k of a) * (signed byte k of b): one IDP4A on the device.
KVSCOPE_HD int dp4a(std::uint32_t a, std::uint32_t b, int c) {
#if defined(__CUDA_ARCH__)
  return __dp4a(static_cast<int>(a), static_cast<int>(b), c);
#else
  for (int k = 0; k < 4; ++k) {
    c += static_cast<int>(static_cast<std::int8_t>(a >> (8 * k))) *
         static_cast<int>(static_cast<std::int8_t>(b >> (8 * k)));
  }
  return c;
#endif
}

// Sum of the 4 signed bytes of `codes`, plus c: a dp4a with bytes of 1.
KVSCOPE_HD int sum4(std::uint32_t codes, int c) {
  return dp4a(0x01010101u, codes, c);
}

// A float at a 4-byte aligned address.
KVSCOPE_HD float load_f(const float* p) {
#if defined(__CUDA_ARCH__)
  return __ldg(p);
#else
  check_aligned(p, 4, "float load");
  return *p;
#endif
}

// The 8-bit activations one part of a weight block multiplies, in registers: their int8
// codes four to a word, in the order of the part's weight quants (the codec's load_xq), and
// the scale d of each 32-value activation block they lie in.
struct XQ8Part {
  std::uint32_t q[8];
  float d[4];
};

}  // namespace kvscope::cuda::qd
