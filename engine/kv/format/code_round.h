// The clamp and the rounding that turn a scaled K or V value into its integer code, inline:
// std::fmin / std::fmax / std::round are library calls on x86-64 without SSE4.1, and they
// were a third of int4's quantization time (callgrind, SmolLM2). Same results as those
// calls, so the bytes stay those the CUDA kernels are tested against:
//   code_clamp(v, lo, hi) == std::fmin(std::fmax(v, lo), hi), NaN -> lo
//   code_round(v)         == std::round(v) for |v| < 2^23 (codes are at most 127)
#pragma once

namespace kvscope {

inline float code_clamp(float v, float lo, float hi) {
  const float above = v > lo ? v : lo;  // NaN compares false: lo, as fmax gives
  return above < hi ? above : hi;
}

// Rounds half away from zero: the truncation is exact below 2^23, and so is v minus it.
inline int code_round(float v) {
  const int t = static_cast<int>(v);
  const float frac = v - static_cast<float>(t);
  return t + (frac >= 0.5f ? 1 : 0) - (frac <= -0.5f ? 1 : 0);
}

}  // namespace kvscope
