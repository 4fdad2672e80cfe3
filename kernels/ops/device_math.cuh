// Device helpers every kernel file shares: warp/block reductions, fp16 conversions that
// match util/half.h bit for bit, and the dtype switches for reading weights (through the
// codecs of quant_dequant.h) and KV vectors element by element.
#pragma once

#include <cuda_fp16.h>

#include <cstdint>

#include "backend/kernel_launchers.h"
#include "quant/quant_dequant.h"

namespace kvscope::cuda {

inline constexpr int kWarp = 32;

// Sum over the warp, every lane gets it: float for the kernels' sums, double for the
// quantization-error sums kv_append keeps.
template <class T>
__device__ inline T warp_sum(T v) {
  for (int o = kWarp / 2; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

// fmaxf ignores a NaN operand, as the CPU quantizer's `if (a > amax)` does.
__device__ inline float warp_max(float v) {
  for (int o = kWarp / 2; o > 0; o /= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

// Sum over the whole CTA (blockDim.x a multiple of 32, at most 1024); every thread gets it.
// scratch: 32 floats of shared memory.
__device__ inline float block_sum(float v, float* scratch) {
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;
  v = warp_sum(v);
  __syncthreads();  // scratch may still be read by a previous call
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  const int n_warps = blockDim.x / kWarp;
  v = lane < n_warps ? scratch[lane] : 0.0f;
  return warp_sum(v);
}

// fp16 bits -> float (exact; CUDA's conversion is exact for every fp16 value).
__device__ inline float half_bits_to_float(std::uint16_t h) {
  return __half2float(__ushort_as_half(h));
}

// float -> fp16 bits, exactly as kvscope::float_to_fp16 (round to nearest even, overflow to
// inf, NaN to sign | 0x7e00): the KV cache bytes must not depend on where they were written.
__device__ inline std::uint16_t float_to_half_bits(float f) {
  const std::uint32_t x = __float_as_uint(f);
  const std::uint32_t sign = (x >> 16) & 0x8000u;
  const std::uint32_t abs = x & 0x7fffffffu;
  if (abs > 0x7f800000u) return static_cast<std::uint16_t>(sign | 0x7e00u);
  return static_cast<std::uint16_t>(sign | __half_as_ushort(__float2half_rn(__uint_as_float(abs))));
}

// Little-endian fp16 from two bytes at any alignment (ggml block scales).
__device__ inline float load_half_unaligned(const std::uint8_t* p) {
  return half_bits_to_float(static_cast<std::uint16_t>(p[0] | (p[1] << 8)));
}

// The one dtype dispatch of the quantized weight types (host side: launchers, geometry):
// calls f.template operator()<Codec>() with type's codec from quant_dequant.h and returns
// true, or returns false for F32 / F16.
template <class F>
bool with_quant_codec(DeviceWeightType type, F&& f) {
  switch (type) {
    case DeviceWeightType::F32:
    case DeviceWeightType::F16:
      return false;
    case DeviceWeightType::Q8_0:
      f.template operator()<qd::Q8_0>();
      return true;
    case DeviceWeightType::Q4_0:
      f.template operator()<qd::Q4_0>();
      return true;
    case DeviceWeightType::Q4_1:
      f.template operator()<qd::Q4_1>();
      return true;
    case DeviceWeightType::Q5_0:
      f.template operator()<qd::Q5_0>();
      return true;
    case DeviceWeightType::Q5_1:
      f.template operator()<qd::Q5_1>();
      return true;
    case DeviceWeightType::Q4_K:
      f.template operator()<qd::Q4_K>();
      return true;
    case DeviceWeightType::Q5_K:
      f.template operator()<qd::Q5_K>();
      return true;
    case DeviceWeightType::Q6_K:
      f.template operator()<qd::Q6_K>();
      return true;
  }
  return false;
}

// Element c of a stored weight row, bit for bit as dequantize_row gives it (embedding
// lookups; matvec has its own per-lane paths). Byte loads only: any row alignment.
__device__ inline float weight_element(DeviceWeightType type, const std::uint8_t* row, int c) {
  switch (type) {
    case DeviceWeightType::F32:
      return reinterpret_cast<const float*>(row)[c];
    case DeviceWeightType::F16:
      return half_bits_to_float(reinterpret_cast<const std::uint16_t*>(row)[c]);
    case DeviceWeightType::Q8_0:
      return qd::row_value<qd::Q8_0>(row, c);
    case DeviceWeightType::Q4_0:
      return qd::row_value<qd::Q4_0>(row, c);
    case DeviceWeightType::Q4_1:
      return qd::row_value<qd::Q4_1>(row, c);
    case DeviceWeightType::Q5_0:
      return qd::row_value<qd::Q5_0>(row, c);
    case DeviceWeightType::Q5_1:
      return qd::row_value<qd::Q5_1>(row, c);
    case DeviceWeightType::Q4_K:
      return qd::row_value<qd::Q4_K>(row, c);
    case DeviceWeightType::Q5_K:
      return qd::row_value<qd::Q5_K>(row, c);
    case DeviceWeightType::Q6_K:
      return qd::row_value<qd::Q6_K>(row, c);
  }
  return 0.0f;
}

// Element i of a stored V vector, or an F16 / Int8 key, as kv_dequantize computes it
// (scale * q in float). group: kv_group_size(head_dim) = min(32, head_dim).
__device__ inline float kv_element(KvDtype dtype, const std::uint8_t* data,
                                   const std::uint16_t* scales, int i, int group) {
  switch (dtype) {
    case KvDtype::F16:
      return half_bits_to_float(reinterpret_cast<const std::uint16_t*>(data)[i]);
    case KvDtype::Int8:
      return half_bits_to_float(scales[i / group]) *
             static_cast<float>(static_cast<std::int8_t>(data[i]));
    case KvDtype::Int4: {
      const unsigned byte = data[i >> 1];
      const int q = static_cast<int>((i & 1) ? (byte >> 4) : (byte & 0x0fu)) - 8;
      return half_bits_to_float(scales[i / group]) * static_cast<float>(q);
    }
  }
  return 0.0f;
}

// Element i of a stored key. Int4 keys are offset int4 (kv_k4_dequantize): o[i] + m + s *
// code with (s, m) the pair of group i / group, added in the CPU's order and rounding (no
// fused multiply-add), so the value is the CPU's bit for bit. Other dtypes: kv_element.
__device__ inline float kv_key_element(KvDtype dtype, const std::uint8_t* data,
                                       const std::uint16_t* scales, const std::uint16_t* offsets,
                                       int i, int group) {
  if (dtype != KvDtype::Int4) return kv_element(dtype, data, scales, i, group);
  const int g = i / group;
  const unsigned byte = data[i >> 1];
  const float code = static_cast<float>((i & 1) ? (byte >> 4) : (byte & 0x0fu));
  const float base =
      __fadd_rn(half_bits_to_float(offsets[i]), half_bits_to_float(scales[2 * g + 1]));
  return __fadd_rn(base, __fmul_rn(half_bits_to_float(scales[2 * g]), code));
}

// Grid size for n items at `per_block` items per CTA.
inline unsigned blocks_for(std::int64_t n, int per_block) {
  return static_cast<unsigned>((n + per_block - 1) / per_block);
}

}  // namespace kvscope::cuda
