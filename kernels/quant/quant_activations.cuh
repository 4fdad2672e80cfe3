// The device half of the 8-bit activations (quant_activations.h): one warp quantizes one
// block of 32 values, lane i holding value i. Shared by the stand-alone quantizer
// (quantize_activations.cu) and the kernels that write a projection's input and its codes in
// one pass (RMSNorm, SwiGLU), so every path gives the same codes, bit for bit.
#pragma once

#include "ops/device_math.cuh"
#include "quant/quant_activations.h"

namespace kvscope::cuda {

// v: this lane's value of the block; q: the block's 32 codes; d: its scale. Every lane of
// the warp must call it (the max goes round the warp).
__device__ inline void quantize_q8_warp(float v, int lane, std::int8_t* q, float* d) {
  float amax = fabsf(v);
  for (int o = kWarp / 2; o > 0; o /= 2) {
    amax = qd::q8_amax(amax, __shfl_xor_sync(0xffffffffu, amax, o));
  }
  const float scale = qd::q8_scale(amax);
  q[lane] = qd::q8_code(v, scale);
  if (lane == 0) *d = scale;
}

}  // namespace kvscope::cuda
