// The per-group step of the KV quantizers: a group's fp16 scale (and, for offset-int4 keys,
// its minimum) from the range of its values. One definition for the scalar quantizers
// (kv_format.cpp, kv_format_k4.cpp) and their SSE2 versions (kv_quantize_sse2.cpp), so the
// two write the same bytes; the CUDA append kernel repeats it (kernels/attention/kv_append.cu).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "util/half.h"

namespace kvscope {

inline constexpr float kKvMaxFp16 = 65504.0f;  // largest finite fp16: scales are clamped to it

// A symmetric group's scale: fp16(min(amax / qmax, 65504)), amax the largest |x| that is a
// number.
inline std::uint16_t kv_symmetric_scale(float amax, float qmax) {
  return float_to_fp16(std::min(amax / qmax, kKvMaxFp16));
}

// An offset-int4 group's (s, m) from its residuals' range [lo, hi] (lo > hi: no residual is
// a number): s = fp16(min((hi - lo) / 15, 65504)), m = fp16(clamp(lo, +-65504)).
inline void kv_k4_group_scales(float lo, float hi, std::uint16_t* s, std::uint16_t* m) {
  if (lo > hi) lo = hi = 0.0f;
  // fmin, not std::min: inf - inf is NaN, and fmin turns it into the clamp
  *s = float_to_fp16(std::fmin((hi - lo) / 15.0f, kKvMaxFp16));
  *m = float_to_fp16(std::fmax(std::fmin(lo, kKvMaxFp16), -kKvMaxFp16));
}

}  // namespace kvscope
