// fp16 in the CUDA emulation: __half and __half2 as their bits, and the intrinsics the kernels
// use. Conversions round to nearest even as the device's cvt.rn does, and half arithmetic is
// done exactly in double (every sum, difference and product of two fp16 values is exact
// there) and rounded once, so every result is the device's bit for bit.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>

#include "emu_types.h"

struct __half {
  unsigned short __x;
};
struct alignas(4) __half2 {
  __half x, y;
};

namespace kvscope::emu {

// Round-to-nearest-even of a double to fp16 bits; NaN -> 0x7fff (the device's canonical NaN).
inline unsigned short half_bits_rn(double d) {
  const unsigned short sign = std::signbit(d) ? 0x8000u : 0u;
  if (std::isnan(d)) return 0x7fffu;
  const double a = std::fabs(d);
  if (a >= 65520.0) return sign | 0x7c00u;  // halfway to 2^16 and beyond: infinity
  if (a < 0x1p-14) {
    // subnormal: a count of 2^-24 units; 1024 of them is the smallest normal, 0x0400
    return sign | static_cast<unsigned short>(std::rint(std::ldexp(a, 24)));
  }
  int e = 0;
  std::frexp(a, &e);  // a = f * 2^e, f in [0.5, 1): a's exponent is e - 1
  const int exponent = e - 1;
  const auto m = static_cast<unsigned>(std::rint(std::ldexp(a, 10 - exponent)));  // [1024, 2048]
  // a carry to 2048 steps the exponent up: the sum below does that by itself
  return sign | static_cast<unsigned short>(((exponent + 15) << 10) + (m - 1024u));
}

inline float half_bits_to_float(unsigned short h) {
  const unsigned sign = (h & 0x8000u) << 16;
  const unsigned exponent = (h >> 10) & 0x1fu;
  const unsigned mantissa = h & 0x3ffu;
  if (exponent == 0x1fu) return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));
  if (exponent == 0) {
    const float v = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -v : v;
  }
  return std::bit_cast<float>(sign | ((exponent + 112u) << 23) | (mantissa << 13));
}

}  // namespace kvscope::emu

inline __half __ushort_as_half(unsigned short bits) {
  return __half{bits};
}
inline unsigned short __half_as_ushort(__half h) {
  return h.__x;
}
inline __half __float2half_rn(float f) {
  return __half{kvscope::emu::half_bits_rn(static_cast<double>(f))};
}
inline __half __float2half(float f) {
  return __float2half_rn(f);
}
inline float __half2float(__half h) {
  return kvscope::emu::half_bits_to_float(h.__x);
}
inline __half2 __float2half2_rn(float f) {
  return __half2{__float2half_rn(f), __float2half_rn(f)};
}
inline __half2 __floats2half2_rn(float a, float b) {
  return __half2{__float2half_rn(a), __float2half_rn(b)};
}
inline float2 __half22float2(__half2 h) {
  return float2{__half2float(h.x), __half2float(h.y)};
}
inline float __low2float(__half2 h) {
  return __half2float(h.x);
}
inline float __high2float(__half2 h) {
  return __half2float(h.y);
}

namespace kvscope::emu {
// One fp16 operation: exact in double, then rounded once.
template <class Op>
__half half_op(__half a, __half b, Op op) {
  return __half{
      half_bits_rn(op(static_cast<double>(__half2float(a)), static_cast<double>(__half2float(b))))};
}
}  // namespace kvscope::emu

inline __half __hadd(__half a, __half b) {
  return kvscope::emu::half_op(a, b, [](double x, double y) { return x + y; });
}
inline __half __hsub(__half a, __half b) {
  return kvscope::emu::half_op(a, b, [](double x, double y) { return x - y; });
}
inline __half __hmul(__half a, __half b) {
  return kvscope::emu::half_op(a, b, [](double x, double y) { return x * y; });
}
inline __half2 __hadd2(__half2 a, __half2 b) {
  return __half2{__hadd(a.x, b.x), __hadd(a.y, b.y)};
}
inline __half2 __hsub2(__half2 a, __half2 b) {
  return __half2{__hsub(a.x, b.x), __hsub(a.y, b.y)};
}
inline __half2 __hmul2(__half2 a, __half2 b) {
  return __half2{__hmul(a.x, b.x), __hmul(a.y, b.y)};
}
