// Activations quantized to 8 bits, for the integer-dot matvec path (launch_matvec_q8): what
// llama.cpp's CUDA backend does for quantized weights (its q8_1 activations), so that a
// decode step spends a few integer dot-product instructions per 4 weights instead of a
// dequantize, a conversion and a float multiply-add per weight. Without it the quantized
// kernels issue about one instruction per 2 weight bytes, which bounds them below the memory
// bandwidth of GPUs with many bytes per SM clock (an H200, an RTX 3060).
//
// Layout, per activation row of `cols` values (cols % 32 == 0):
//   q [cols]       int8 codes, q_i = round(x_i / d) (round half to even)
//   d [cols / 32]  per block of 32: the scale max |x_i| / 127
// The weight formats' offsets and minimums are applied in integers too (a dp4a of the codes
// with constant bytes), so a projection computes sum w_i x^_i with x^_i = d q_i exactly as
// far as the integers go: its error is sum w_i (x^_i - x_i), at most sum |w_i| d / 2.
// A block with a NaN gets d = NaN and one with an infinity d = inf, so the product of every
// weight row with it is NaN, as the float path gives, and the sampler reports it.
//
// Plain C++ that nvcc and g++ both compile: the kernel quantizes a block with a warp, the
// host reference below with the same operations, so the device result is checked bit for bit.
#pragma once

#include <cmath>
#include <cstdint>

#include "quant/quant_codec_base.h"

namespace kvscope::cuda::qd {

inline constexpr int kQ8Block = 32;

// Larger of the running max and |v|, with NaN winning: a NaN activation must not vanish.
KVSCOPE_HD float q8_amax(float amax, float v) {
  const float a = std::fabs(v);
  return (a > amax || a != a) ? a : amax;
}

KVSCOPE_HD float q8_scale(float amax) {
#if defined(__CUDA_ARCH__)
  return __fdiv_rn(amax, 127.0f);
#else
  return amax / 127.0f;
#endif
}

// The int8 code of x in a block of scale d (0 when d is 0, NaN or inf: no code is
// meaningful there, and d itself carries the NaN).
KVSCOPE_HD std::int8_t q8_code(float x, float d) {
  if (!(d > 0.0f) || d == INFINITY) return 0;
#if defined(__CUDA_ARCH__)
  const float r = rintf(__fdiv_rn(x, d));
#else
  const float r = std::rint(x / d);
#endif
  return static_cast<std::int8_t>(r > 127.0f ? 127.0f : (r < -127.0f ? -127.0f : r));
}

// The host reference of launch_quantize_q8: x [n] -> q [n], d [n / 32].
inline void quantize_q8_reference(const float* x, std::int64_t n, std::int8_t* q, float* d) {
  for (std::int64_t b = 0; b < n / kQ8Block; ++b) {
    const float* xb = x + b * kQ8Block;
    float amax = 0.0f;
    for (int i = 0; i < kQ8Block; ++i) amax = q8_amax(amax, xb[i]);
    d[b] = q8_scale(amax);
    for (int i = 0; i < kQ8Block; ++i) q[b * kQ8Block + i] = q8_code(xb[i], d[b]);
  }
}

}  // namespace kvscope::cuda::qd
