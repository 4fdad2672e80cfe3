// The fast paged attention path reads a stored K or V vector as a team of lanes: lane c of
// the team holds the 8 consecutive elements [8c, 8c + 8), read with one load of 16 (F16),
// 8 (Int8) or 4 (Int4) bytes, and the scale of the quantization group they lie in. With
// head_dim >= 64 the symmetric formats' groups are 32 values and offset-int4 keys' 16
// (kv_format.h), so the 8 elements of a lane never straddle two groups and the lane's group
// is c / 4 (c / 2 for offset-int4 keys). The host checks that every load here is aligned
// and every group that size (fast_attention_unsupported) before the kernel runs.
//
// Dequantization happens in registers, as integer codes turned into floats; the group's
// scale is applied once to a lane's partial dot product (K) or to the softmax weight (V)
// instead of to every element.
#pragma once

#include <cuda_fp16.h>

#include <cstdint>
#include <cstring>

#include "attention/fast_attention_tile.h"
#include "ops/device_math.cuh"

namespace kvscope::cuda {

// 8 fp16 values (little endian: element 0 in the low half of w.x) -> floats, exactly.
__device__ __forceinline__ void f16x8_to_float(const uint4& w, float (&x)[8]) {
  const unsigned words[4] = {w.x, w.y, w.z, w.w};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    x[2 * i] = __half2float(__ushort_as_half(static_cast<unsigned short>(words[i] & 0xffffu)));
    x[2 * i + 1] = __half2float(__ushort_as_half(static_cast<unsigned short>(words[i] >> 16)));
  }
}

// 8 int8 codes -> floats without an int-to-float conversion (a quarter-rate instruction, which
// would bound the int8 kernel): c + 128 (the code with its sign bit flipped) goes into the low
// byte of the float 2^23 (0x4B000000), giving 2^23 + 128 + c exactly, and one subtraction
// leaves c. Per value one byte permute and one add, both full rate.
__device__ __forceinline__ void int8x8_to_float(const uint2& w, float (&x)[8]) {
  const unsigned words[2] = {w.x ^ 0x80808080u, w.y ^ 0x80808080u};
#pragma unroll
  for (int i = 0; i < 2; ++i) {
#pragma unroll
    for (int b = 0; b < 4; ++b) {
      // result bytes: [0] = byte b of the word, [1], [2] = 0x00 and [3] = 0x4B from 0x4B000000
      const unsigned bits = __byte_perm(words[i], 0x4B000000u, 0x7540u | static_cast<unsigned>(b));
      x[4 * i + b] = __uint_as_float(bits) - 8388736.0f;  // 2^23 + 128
    }
  }
}

// 8 nibbles (element e in bits [4e, 4e + 4): low nibble = even element) -> code - bias as
// floats. Elements j and j + 4 land in one fp16 pair as 1024 + code (0x6400 | code), from
// which 1024 + bias is subtracted exactly in fp16.
__device__ __forceinline__ void nibbles_to_float(unsigned w, float bias, float (&x)[8]) {
  const __half2 offset = __float2half2_rn(1024.0f + bias);
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    const unsigned packed = ((w >> (4 * j)) & 0x000f000fu) | 0x64006400u;
    __half2 h;
    memcpy(&h, &packed, sizeof h);
    const float2 f = __half22float2(__hsub2(h, offset));
    x[j] = f.x;
    x[j + 4] = f.y;
  }
}

// One lane's share of one vector: the raw bits, then the codes as floats and the factor
// that turns them into values (value = scale * code, plus the offsets for Int4Offset).
template <LaneFormat F>
struct LaneVector;

template <>
struct LaneVector<LaneFormat::F16> {
  uint4 bits;
  __device__ __forceinline__ void load(bool ok, const std::uint8_t* data, const std::uint16_t*,
                                       int c) {
    bits = make_uint4(0, 0, 0, 0);
    if (ok) bits = __ldg(reinterpret_cast<const uint4*>(data) + c);
  }
  __device__ __forceinline__ void codes(float (&x)[8]) const { f16x8_to_float(bits, x); }
  __device__ __forceinline__ float scale() const { return 1.0f; }
};

template <>
struct LaneVector<LaneFormat::Int8> {
  uint2 bits;
  unsigned short s;
  __device__ __forceinline__ void load(bool ok, const std::uint8_t* data,
                                       const std::uint16_t* scales, int c) {
    bits = make_uint2(0, 0), s = 0;
    if (ok) {
      bits = __ldg(reinterpret_cast<const uint2*>(data) + c);
      s = __ldg(reinterpret_cast<const unsigned short*>(scales) + c / 4);
    }
  }
  __device__ __forceinline__ void codes(float (&x)[8]) const { int8x8_to_float(bits, x); }
  __device__ __forceinline__ float scale() const { return half_bits_to_float(s); }
};

template <>
struct LaneVector<LaneFormat::Int4Sym> {
  unsigned bits;
  unsigned short s;
  __device__ __forceinline__ void load(bool ok, const std::uint8_t* data,
                                       const std::uint16_t* scales, int c) {
    bits = 0, s = 0;
    if (ok) {
      bits = __ldg(reinterpret_cast<const unsigned*>(data) + c);
      s = __ldg(reinterpret_cast<const unsigned short*>(scales) + c / 4);
    }
  }
  __device__ __forceinline__ void codes(float (&x)[8]) const { nibbles_to_float(bits, 8.0f, x); }
  __device__ __forceinline__ float scale() const { return half_bits_to_float(s); }
};

// Offset int4 keys: value = o + m + s * code, with the group's (s, m) one 32-bit load; a
// group is 16 values, two lanes.
template <>
struct LaneVector<LaneFormat::Int4Offset> {
  unsigned bits;
  unsigned sm;  // fp16 s (low half), fp16 m (high half)
  __device__ __forceinline__ void load(bool ok, const std::uint8_t* data,
                                       const std::uint16_t* scales, int c) {
    bits = 0, sm = 0;
    if (ok) {
      bits = __ldg(reinterpret_cast<const unsigned*>(data) + c);
      sm = __ldg(reinterpret_cast<const unsigned*>(scales) + c / 2);
    }
  }
  __device__ __forceinline__ void codes(float (&x)[8]) const { nibbles_to_float(bits, 0.0f, x); }
  __device__ __forceinline__ float scale() const {
    return half_bits_to_float(static_cast<std::uint16_t>(sm & 0xffffu));
  }
  __device__ __forceinline__ float min() const {
    return half_bits_to_float(static_cast<std::uint16_t>(sm >> 16));
  }
};

}  // namespace kvscope::cuda
